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

}   // namespace headscope
