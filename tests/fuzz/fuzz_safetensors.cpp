// Feeds: arbitrary bytes as a .safetensors file, to parse_safetensors (the in-memory
// parser) and to SafetensorsFile::open on the same bytes written to a file (mmap, the
// file checks), then reads every tensor it accepted (to_floats, matrix, the non-finite
// count). Asserts: either a headscope::Error, or a header whose every tensor lies inside
// the data with exactly numel * dtype size bytes, sorted by name, none overlapping; the
// file API agrees with the in-memory one; and re-encoding the accepted tensors and
// metadata with encode_safetensors parses back to the same names, dtypes, shapes, bytes
// and metadata.

#include "core/tensor/dtype.h"
#include "core/tensor/safetensors.h"
#include "fuzz_support.h"

#include <algorithm>
#include <cstring>

using namespace headscope;
using namespace headscope::fuzz;

namespace {

bool same_tensors(const std::vector<TensorView>& a, const std::vector<TensorView>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].name != b[i].name || a[i].dtype != b[i].dtype || a[i].shape != b[i].shape) return false;
        if (a[i].bytes.size() != b[i].bytes.size()) return false;
        if (!a[i].bytes.empty() && std::memcmp(a[i].bytes.data(), b[i].bytes.data(), a[i].bytes.size()) != 0) {
            return false;
        }
    }
    return true;
}

void check_parsed(const ParsedHeader& parsed, std::span<const std::byte> file) {
    const std::byte* begin = file.data();
    const std::byte* end = file.data() + file.size();
    for (std::size_t i = 0; i < parsed.tensors.size(); ++i) {
        const TensorView& t = parsed.tensors[i];
        require(t.name != "__metadata__", "__metadata__ parsed as a tensor");
        require(i == 0 || parsed.tensors[i - 1].name < t.name, "tensors not sorted by name, or a name twice");
        for (std::int64_t d : t.shape) require(d >= 0, "negative dimension in " + t.name);
        const auto expected = static_cast<std::uint64_t>(t.numel()) * dtype_size(t.dtype);
        require(t.bytes.size() == expected, "tensor " + t.name + " has the wrong byte count");
        if (!t.bytes.empty()) {
            require(t.bytes.data() >= begin + 8 && t.bytes.data() + t.bytes.size() <= end,
                    "tensor " + t.name + " lies outside the file's data");
        }
        // Every element converts; the non-finite count is within the element count.
        const std::vector<float> values = t.to_floats();
        require(values.size() == static_cast<std::size_t>(t.numel()), "to_floats size");
        const std::int64_t bad = count_non_finite(t.dtype, t.bytes.data(), values.size());
        require(bad >= 0 && bad <= t.numel(), "count_non_finite out of range");
    }
    // No two non-empty tensors share a byte.
    std::vector<std::span<const std::byte>> spans;
    for (const TensorView& t : parsed.tensors) {
        if (!t.bytes.empty()) spans.push_back(t.bytes);
    }
    std::sort(spans.begin(), spans.end(), [](auto a, auto b) { return a.data() < b.data(); });
    for (std::size_t i = 1; i < spans.size(); ++i) {
        require(spans[i - 1].data() + spans[i - 1].size() <= spans[i].data(), "tensors overlap");
    }
}

// What was accepted must survive a write and a read.
void check_round_trip(const ParsedHeader& parsed) {
    std::vector<TensorToWrite> tensors;
    for (const TensorView& t : parsed.tensors) tensors.push_back({t.name, t.dtype, t.shape, t.bytes});
    const std::vector<std::byte> encoded = encode_safetensors(tensors, parsed.metadata);
    const ParsedHeader again = parse_safetensors(encoded, "re-encoded");
    require(same_tensors(parsed.tensors, again.tensors), "re-encoded tensors differ");
    require(parsed.metadata == again.metadata, "re-encoded metadata differs");
}

void check_file_api(std::string_view bytes, const ParsedHeader& parsed) {
    const std::string path = ScratchDir::get().file("input.safetensors");
    write_file(path, bytes);
    const SafetensorsFile file = SafetensorsFile::open(path);
    require(same_tensors(file.tensors(), parsed.tensors), "SafetensorsFile::open disagrees with parse_safetensors");
    require(file.metadata() == parsed.metadata, "metadata differs between open and parse");
    for (const TensorView& t : file.tensors()) {
        require(file.find(t.name) == &t, "find() misses " + t.name);
        if (t.shape.size() == 1 || t.shape.size() == 2) {
            const Matrix m = file.matrix(t.name);
            require(m.size() == t.numel(), "matrix() size of " + t.name);
        }
    }
    file.check_unchanged();
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    bool parsed_ok = false;
    ParsedHeader parsed;
    run_expecting_errors([&] {
        parsed = parse_safetensors(file, "input.safetensors");
        parsed_ok = true;
        check_parsed(parsed, file);
        check_round_trip(parsed);
    });
    // The file path must answer as the in-memory one did: accepted or refused.
    bool opened_ok = false;
    run_expecting_errors([&] {
        check_file_api(bytes, parsed);
        opened_ok = true;
    });
    require(parsed_ok == opened_ok,
            parsed_ok ? "open() refused what parse accepted" : "open() accepted what parse refused");
    return 0;
}
