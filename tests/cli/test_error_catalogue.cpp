// docs/errors.md, run: every headscope-cli row's exit status and stderr line are what
// the catalogue says, and a failing run leaves the output file as it was.

#include "error_catalogue.h"

#include <set>

using namespace headscope::test;

namespace {

std::vector<CatalogueRow> catalogue() {
    std::string path(HEADSCOPE_SOURCE_DIR);   // appended: GCC 12 mis-warns (-Warray-bounds) on + here
    path.append("/docs/errors.md");
    return read_catalogue(path);
}

}   // namespace

TEST_CASE("docs/errors.md: at least 40 cases, numbered in order, each one line") {
    const auto rows = catalogue();
    CHECK(rows.size() >= 40);
    std::set<std::string> commands;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CAPTURE(rows[i].command);
        CHECK(rows[i].number == static_cast<int>(i) + 1);
        CHECK(rows[i].message.find('\n') == std::string::npos);
        CHECK(!rows[i].message.empty());
        CHECK(commands.insert(rows[i].command).second);   // no case listed twice
        // What failed is named: a message says what is wrong with which input.
        CHECK(rows[i].message.size() > 20);
    }
}

TEST_CASE("docs/errors.md: every headscope-cli case shows the catalogue's message") {
    int checked = 0;
    for (const auto& row : catalogue()) {
        if (is_gui_row(row)) continue;
        check_catalogue_row(row);
        ++checked;
    }
    CHECK(checked >= 40);
}
