#pragma once
// Where the app's own files live: the demo sentence, sample pictures and the trained
// demo models (assets/models/). In order: $HEADSCOPE_ASSETS when set; an installed
// app's share/headscope/assets beside its bin/ folder (cmake --install); else the source
// tree's assets/ folder this build came from.

#include <filesystem>

namespace headscope {

std::filesystem::path assets_dir();

// The installed layout's folder for a program at `program` (.../bin/headscope gives
// .../share/headscope/assets), whether or not it exists.
std::filesystem::path installed_assets_dir(const std::filesystem::path& program);

}   // namespace headscope
