#include "core/base/file_bytes.h"

#include "core/base/error.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace headscope {

namespace fs = std::filesystem;

std::string read_file_bytes(const std::string& path, std::uintmax_t max_bytes, std::string_view what) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) throw Error(path + ": no such file");
    if (fs::is_directory(status)) throw Error(path + ": is a directory, expected " + std::string(what));
    if (!fs::is_regular_file(status)) throw Error(path + ": not a regular file, expected " + std::string(what));
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw Error(path + ": cannot read (" + ec.message() + ")");
    if (size > max_bytes) {
        throw Error(path + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes >> 20) +
                    " MiB " + std::string(what) + " may have");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
    std::string bytes(static_cast<std::size_t>(size), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (static_cast<std::size_t>(in.gcount()) != bytes.size()) throw Error(path + ": cannot read all of it");
    return bytes;
}

}   // namespace headscope
