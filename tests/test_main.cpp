// The test binaries' main: doctest's, plus one rule. ctest runs each test case by its
// name (doctest_discover_tests), and a name CMake cannot pass whole (a ';' splits it into
// two arguments) matches no test case: doctest would then report success having run
// nothing. A run whose filters let no test case through fails instead, naming them.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

// Reads how many test cases the run's filters let through, at the run's end.
struct CasesRun : doctest::IReporter {
    explicit CasesRun(const doctest::ContextOptions&) {}
    static unsigned& count() {
        static unsigned n = 0;
        return n;
    }
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats& stats) override { count() = stats.numTestCasesPassingFilters; }
    void test_case_start(const doctest::TestCaseData&) override {}
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("cases_run", 1, CasesRun);

}   // namespace

int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    const int result = context.run();
    if (context.shouldExit()) return result;   // --help, --list-test-cases, --count ...
    if (CasesRun::count() == 0) {
        std::fprintf(stderr, "no test case matches the filters given (a ';' in a test's name splits it under ctest)\n");
        return 1;
    }
    return result;
}
