#pragma once
// Where the app's own files live: the demo sentence, sample pictures and the trained
// demo models (assets/models/). $HEADSCOPE_ASSETS when set (an app moved or installed
// away from its source tree), else the source tree's assets/ folder this build came from.

#include <filesystem>

namespace headscope {

std::filesystem::path assets_dir();

}   // namespace headscope
