#pragma once
// `headscope-cli mha`: one multi-head attention layer on tensors from files, as
// ../shared/CLI.md specifies.

#include <CLI/CLI.hpp>

#include <functional>

namespace headscope::cli {

// Registers the subcommand on `app`; the returned function runs it once parsed and
// returns the exit status (0, or 2 after printing one line).
std::function<int()> add_mha_command(CLI::App& app);

} // namespace headscope::cli
