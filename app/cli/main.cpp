// headscope-cli: the headless face of Headscope (see docs/cli.md). Links core
// only. Every error is caught here, printed as one line, and exits 2.

#include "app/cli/cli_errors.h"
#include "app/cli/command.h"
#include "core/base/error.h"
#include "core/tensor/memory_reuse.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <functional>
#include <new>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
    using namespace headscope;
    reuse_freed_memory();
    CLI::App app("Headscope: look inside attention heads, headlessly", "headscope-cli");
    app.require_subcommand(1);
    app.set_version_flag("--version", "headscope-cli " HEADSCOPE_VERSION);

    const std::vector<cli::Command> commands = {
        cli::add_mha_command(app),     cli::add_dump_command(app),   cli::add_info_command(app),
        cli::add_render_command(app),  cli::add_models_command(app), cli::add_export_weights_command(app),
        cli::add_analyze_command(app), cli::add_bench_command(app),  cli::add_tokenize_command(app),
    };

    // CLI11 reports a mistyped command or an option before the command as "a subcommand
    // is required"; name what was given instead.
    const std::string first = argc > 1 ? argv[1] : "";
    if (!first.empty() && first[0] == '-' && first != "-h" && first != "--help" && first != "--help-all" &&
        first != "--version") {
        return cli::report_error("unknown option '" + first +
                                 "' (give a command first, e.g. headscope-cli mha --help)");
    }
    if (argc > 1 && argv[1][0] != '-') {
        std::string known;
        bool found = false;
        for (const auto& command : commands) {
            known.append(known.empty() ? "" : ", ").append(command.parser->get_name());
            found = found || command.parser->get_name() == argv[1];
        }
        if (!found)
            return cli::report_error(std::string("unknown command '") + argv[1] + "' (expected one of: " + known + ")");
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return cli::report_error(std::string(e.what()) + " (see headscope-cli --help)");
    }

    cli::Warnings warnings;
    try {
        for (const auto& command : commands) {
            if (!command.parser->parsed()) continue;
            const int status = command.run(warnings);
            warnings.print();
            return status;
        }
        return cli::report_error("no subcommand given (see headscope-cli --help)");
    } catch (const Error& e) {
        return cli::report_error(warnings.folded_into(e.what()));
    } catch (const std::bad_alloc&) {
        return cli::report_error(warnings.folded_into("out of memory (the inputs are too large for this machine)"));
    } catch (const std::exception& e) {
        return cli::report_error(warnings.folded_into(std::string("internal error: ") + e.what()));
    }
}
