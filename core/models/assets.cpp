#include "core/models/assets.h"

#include <cstdlib>

namespace headscope {

std::filesystem::path assets_dir() {
    if (const char* dir = std::getenv("HEADSCOPE_ASSETS"); dir != nullptr && *dir != '\0') return dir;
    return HEADSCOPE_ASSETS_DIR;
}

}   // namespace headscope
