#pragma once
// Every view, in the order of the window's tabs. --view's accepted names and its help
// come from here too.

#include "ui/views/view.h"

#include <memory>
#include <string>
#include <vector>

namespace headscope::ui {

std::vector<std::unique_ptr<View>> make_views();

// "matrix, tokens, ... or similarity", for --view's help and its error.
std::string view_names();
// Each view's name and summary, one per line, for --help.
std::string view_summaries();
// Whether `name` is a view's name.
bool is_view_name(const std::string& name);

}   // namespace headscope::ui
