#include "core/base/atomic_file.h"

#include "core/base/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace headscope {

namespace {

std::string system_error_text(int error) { return std::strerror(error); }

}   // namespace

void write_file_atomically(const std::string& path, std::span<const std::byte> bytes) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.empty()) throw Error("cannot write: the output file name is empty");
    if (fs::is_directory(path, ec)) {
        throw Error(path + ": is a directory, expected a file path to write");
    }
    const fs::path target(path);
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (!fs::is_directory(folder, ec)) {
        throw Error(path + ": cannot write: folder '" + folder.string() + "' does not exist");
    }

    // O_EXCL on a random name (rather than mkstemp) so the file gets the usual
    // 0666 & ~umask permissions, like any file the user writes.
    std::random_device entropy;
    std::string temp_name;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
        char suffix[32];
        std::snprintf(suffix, sizeof suffix, ".tmp-%d-%08x", static_cast<int>(::getpid()), entropy());
        // Hidden, next to the target (same file system, so rename is atomic).
        // A long name is shortened so the temporary one fits the file system's limit (255).
        std::string hidden_name(".");
        hidden_name.append(target.filename().string().substr(0, 200)).append(suffix);
        temp_name = (folder / hidden_name).string();
        fd = ::open(temp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        // The file is written beside its target first: say so, or "No such file or
        // directory" for /proc/version reads as if the target were missing.
        throw Error(path + ": cannot write: cannot create a file in folder '" + folder.string() + "' (" +
                    system_error_text(errno) + ")");
    }

    auto fail = [&](int error) {
        ::close(fd);
        ::unlink(temp_name.c_str());
        throw Error(path + ": cannot write: " + system_error_text(error));
    };

    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(errno);
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) fail(errno);
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(temp_name.c_str());
        throw Error(path + ": cannot write: " + system_error_text(error));
    }
    if (::rename(temp_name.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temp_name.c_str());
        throw Error(path + ": cannot write: " + system_error_text(error));
    }
}

}   // namespace headscope
