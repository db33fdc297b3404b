#include "core/base/file_bytes.h"

#include "core/base/error.h"
#include "core/base/shown.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

namespace headscope {

namespace fs = std::filesystem;

std::string why_unreachable(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return "exists";
    const int error = errno;
    if (error == ELOOP) return "a loop of symlinks";
    if (error == EACCES) return "permission denied (on it or a folder above it)";
    std::error_code ec;
    if (error == ENOENT && fs::is_symlink(fs::symlink_status(path, ec))) {
        return "a symlink to " + shown(fs::read_symlink(path, ec).string()) + ", which does not exist";
    }
    if (error == ENOENT || error == ENOTDIR) return "no such file";
    return std::strerror(error);
}

std::string read_file_bytes(const std::string& path, std::uintmax_t max_bytes, std::string_view what) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) throw Error(shown(path) + ": " + why_unreachable(path));
    if (fs::is_directory(status)) throw Error(shown(path) + ": is a directory, expected " + std::string(what));
    if (!fs::is_regular_file(status)) throw Error(shown(path) + ": not a regular file, expected " + std::string(what));
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw Error(shown(path) + ": cannot read (" + ec.message() + ")");
    const auto too_large = [&](std::uintmax_t bytes) {
        return Error(shown(path) + ": " + std::to_string(bytes) + " bytes, more than the " +
                     std::to_string(max_bytes >> 20) + " MiB " + std::string(what) + " may have");
    };
    if (size > max_bytes) throw too_large(size);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(shown(path) + ": cannot open (" + std::strerror(errno) + ")");
    // Read to the end rather than to the size: /proc files say 0 and hold more.
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(size));
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
        bytes.append(chunk, static_cast<std::size_t>(in.gcount()));
        if (bytes.size() > max_bytes) throw too_large(bytes.size());
    }
    if (in.bad()) throw Error(shown(path) + ": cannot read all of it");
    return bytes;
}

}   // namespace headscope
