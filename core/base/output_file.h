#pragma once
// Every file Headscope writes goes through here, so that no output ever destroys an input
// or replaces something that is not a file:
// - `check_output` runs before any work: it refuses an output that is the same file as
//   one of the inputs (same device and inode, so through hard links and symlinks too), one
//   that lies inside a folder being read (a model folder), and one that is not a regular
//   file (a FIFO, a device, a socket, a directory).
// - `write_file_atomically` writes through a symlink to the file it names (a temporary
//   file beside that file, renamed onto it, as editors do), keeps an existing file's
//   permissions, and readers only ever see the old content or the complete new one. On
//   failure the temporary file is removed and the destination is untouched.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace headscope {

// One input of a command: a file, or a folder whose files are all read (a model folder).
struct InputPath {
    std::string flag;   // "--model", "--text-file": named in messages
    std::string path;
    bool may_be_folder = false;   // a folder here is read whole; otherwise its own reader refuses it
};

// The file a path names once symlinks are followed (at most 40, as the kernel); the path
// itself when it is not a link. A loop or a chain past 40 is an Error naming `path`.
std::string follow_symlinks(const std::string& path);

// Throws "<flag> <out>: <why>" when `out` must not be written (see above). Inputs that do
// not exist are skipped: their own readers say so.
void check_output(const std::string& flag, const std::string& out, std::span<const InputPath> inputs);

void write_file_atomically(const std::string& path, std::span<const std::byte> bytes);

// The same for a file written in pieces (an output too large to hold whole): bytes go to
// the temporary file at any offsets, and commit() renames it over the destination. Left
// uncommitted (an error, an exception on the way), the temporary file is removed on
// destruction and the destination is untouched. Errors name the destination.
class AtomicOutput {
public:
    explicit AtomicOutput(const std::string& path);
    ~AtomicOutput();
    AtomicOutput(const AtomicOutput&) = delete;
    AtomicOutput& operator=(const AtomicOutput&) = delete;

    void write_at(std::uint64_t offset, std::span<const std::byte> bytes);
    void commit();

private:
    [[noreturn]] void fail(int error);

    std::string path_;     // as the user named it
    std::string target_;   // the file it names, symlinks followed
    std::string temp_;     // beside the target
    int fd_ = -1;
    bool committed_ = false;
};

}   // namespace headscope
