#pragma once
// Writing a file so that readers only ever see the old content or the complete new
// one: the bytes go to a temporary file in the same folder, which is renamed over
// the destination once flushed. On failure the temporary file is removed and the
// destination is untouched.

#include <cstddef>
#include <span>
#include <string>

namespace headscope {

void write_file_atomically(const std::string& path, std::span<const std::byte> bytes);

}   // namespace headscope
