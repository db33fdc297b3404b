#include "core/models/assets.h"

#include <cstdlib>
#include <system_error>

namespace headscope {

std::filesystem::path installed_assets_dir(const std::filesystem::path& program) {
    return program.parent_path().parent_path() / "share" / "headscope" / "assets";
}

std::filesystem::path assets_dir() {
    if (const char* dir = std::getenv("HEADSCOPE_ASSETS"); dir != nullptr && *dir != '\0') return dir;
    // An installed program: its own share/ folder, found from the running executable.
    std::error_code error;
    const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) {
        const std::filesystem::path installed = installed_assets_dir(program);
        if (std::filesystem::is_directory(installed, error)) return installed;
    }
    return HEADSCOPE_ASSETS_DIR;
}

}   // namespace headscope
