#pragma once
// One headscope-cli subcommand: its CLI11 parser and what runs once it parsed.

#include "app/cli/cli_errors.h"

#include <CLI/CLI.hpp>

#include <functional>

namespace headscope::cli {

struct Command {
    CLI::App* parser = nullptr;
    std::function<int(Warnings&)> run;   // returns the exit status; may throw headscope::Error
};

Command add_mha_command(CLI::App& app);
Command add_models_command(CLI::App& app);
Command add_info_command(CLI::App& app);
Command add_dump_command(CLI::App& app);
Command add_export_weights_command(CLI::App& app);
Command add_render_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_analyze_command(CLI::App& app);
Command add_tokenize_command(CLI::App& app);

}   // namespace headscope::cli
