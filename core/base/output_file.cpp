#include "core/base/output_file.h"

#include "core/base/error.h"
#include "core/base/shown.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace headscope {

namespace fs = std::filesystem;

namespace {

// The kernel's own limit on links followed in one lookup (MAXSYMLINKS).
constexpr int max_symlinks_followed = 40;

std::optional<struct stat> status_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return st;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// What a non-regular file is, for "is a FIFO; expected ...".
const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// Refuses a destination that exists and is not a regular file; `target` is `path` with its
// links followed, `what` how messages name `path`.
void require_regular_or_absent(const std::string& what, const std::string& path, const std::string& target) {
    struct stat st {};
    if (::lstat(target.c_str(), &st) != 0) return;
    if (S_ISREG(st.st_mode)) return;
    std::string message = what + ": ";
    if (target != path) message += "links to " + shown(target) + ", which ";
    message += std::string("is ") + kind_of(st.st_mode) + "; expected a regular file (or a link to one) to write";
    throw Error(message);
}

// Is `inner` (a path that need not exist yet) inside the folder `outer`? Both are made
// absolute with every link resolved, so "../model/x" and links into the folder count.
bool lies_inside(const std::string& inner, const std::string& outer) {
    std::error_code ec;
    const fs::path folder = fs::canonical(outer, ec);
    if (ec) return false;
    const fs::path file = fs::weakly_canonical(inner, ec);
    if (ec) return false;
    auto f = file.begin();
    for (auto d = folder.begin(); d != folder.end(); ++d, ++f) {
        if (f == file.end() || *d != *f) return false;
    }
    return true;
}

// The first file of `input` (a file, or any file directly in a folder) that is the very
// file `target` names, through hard links and symlinks.
std::optional<std::string> same_file_in(const InputPath& input, const struct stat& target) {
    const auto input_status = status_of(input.path);
    if (!input_status) return std::nullopt;
    if (!S_ISDIR(input_status->st_mode))
        return same_file(*input_status, target) ? std::optional(input.path) : std::nullopt;
    if (!input.may_be_folder) return std::nullopt;
    std::error_code ec;
    for (fs::directory_iterator it(input.path, ec), end; !ec && it != end; it.increment(ec)) {
        const auto entry = status_of(it->path().string());
        if (entry && same_file(*entry, target)) return it->path().string();
    }
    return std::nullopt;
}

}   // namespace

std::string follow_symlinks(const std::string& path) {
    fs::path current(path);
    for (int followed = 0; followed <= max_symlinks_followed; ++followed) {
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(current, ec))) return current.string();
        const fs::path link = fs::read_symlink(current, ec);
        if (ec) throw Error(shown(path) + ": cannot read the link (" + ec.message() + ")");
        current = link.is_absolute() ? link : current.parent_path() / link;
    }
    throw Error(shown(path) + ": a loop of symlinks (more than " + std::to_string(max_symlinks_followed) +
                " links followed)");
}

void check_output(const std::string& flag, const std::string& out, std::span<const InputPath> inputs) {
    const std::string what = flag + " " + shown(out);
    if (out.empty()) throw Error(flag + ": the output file name is empty");
    std::string target;
    try {
        target = follow_symlinks(out);
    } catch (const Error& e) {
        throw Error(flag + " " + e.what());
    }
    require_regular_or_absent(what, out, target);
    const fs::path folder = fs::path(target).parent_path();
    std::error_code ec;
    if (!folder.empty() && !fs::is_directory(folder, ec)) {
        throw Error(what + ": the folder " + shown(folder.string()) + " does not exist");
    }
    const auto target_status = status_of(target);
    for (const InputPath& input : inputs) {
        if (input.path.empty()) continue;
        if (target_status) {
            if (const auto same = same_file_in(input, *target_status)) {
                std::string message = what + ": is the same file as ";
                if (*same != input.path) message += shown(*same) + " of ";
                throw Error(message + input.flag + " " + shown(input.path) + "; writing it would destroy that input");
            }
        }
        const auto input_status = status_of(input.path);
        if (input.may_be_folder && input_status && S_ISDIR(input_status->st_mode) && lies_inside(target, input.path)) {
            throw Error(what + ": lies inside " + input.flag + " " + shown(input.path) +
                        ", which is being read; write it elsewhere");
        }
    }
}

AtomicOutput::AtomicOutput(const std::string& path) : path_(path) {
    if (path.empty()) throw Error("cannot write: the output file name is empty");
    target_ = follow_symlinks(path);
    require_regular_or_absent(shown(path), path, target_);
    const fs::path target_path(target_);
    const fs::path folder = target_path.has_parent_path() ? target_path.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
        throw Error(shown(path) + ": cannot write: folder '" + shown(folder.string()) + "' does not exist");
    }
    const auto existing = status_of(target_);

    // O_EXCL on a random name (rather than mkstemp) so a new file gets the usual
    // 0666 & ~umask permissions, like any file the user writes.
    std::random_device entropy;
    for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
        char suffix[32];
        std::snprintf(suffix, sizeof suffix, ".tmp-%d-%08x", static_cast<int>(::getpid()), entropy());
        // Hidden, next to the target (same file system, so rename is atomic).
        // A long name is shortened so the temporary one fits the file system's limit (255).
        std::string hidden_name(".");
        hidden_name.append(target_path.filename().string().substr(0, 200)).append(suffix);
        temp_ = (folder / hidden_name).string();
        fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd_ < 0 && errno != EEXIST) break;
    }
    if (fd_ < 0) {
        // The file is written beside its target first: say so, or "No such file or
        // directory" for /proc/version reads as if the target were missing.
        throw Error(shown(path) + ": cannot write: cannot create a file in folder '" + shown(folder.string()) + "' (" +
                    std::strerror(errno) + ")");
    }
    // Replacing a file keeps its permissions (a read-only-to-others file stays so).
    if (existing && ::fchmod(fd_, existing->st_mode & 07777) != 0) fail(errno);
}

AtomicOutput::~AtomicOutput() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
}

void AtomicOutput::fail(int error) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::unlink(temp_.c_str());
    committed_ = true;   // nothing left to remove
    throw Error(shown(path_) + ": cannot write: " + std::strerror(error));
}

void AtomicOutput::write_at(std::uint64_t offset, std::span<const std::byte> bytes) {
    if (fd_ < 0) throw Error(shown(path_) + ": cannot write: the file is already closed");
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n =
            ::pwrite(fd_, bytes.data() + written, bytes.size() - written, static_cast<off_t>(offset + written));
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(errno);
        }
        written += static_cast<std::size_t>(n);
    }
}

void AtomicOutput::commit() {
    if (fd_ < 0) throw Error(shown(path_) + ": cannot write: the file is already closed");
    if (::fsync(fd_) != 0) fail(errno);
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) fail(errno);
    if (::rename(temp_.c_str(), target_.c_str()) != 0) fail(errno);
    committed_ = true;
}

void write_file_atomically(const std::string& path, std::span<const std::byte> bytes) {
    AtomicOutput out(path);
    out.write_at(0, bytes);
    out.commit();
}

}   // namespace headscope
