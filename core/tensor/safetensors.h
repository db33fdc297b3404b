#pragma once
// Reading and writing .safetensors files: an 8-byte little-endian header length N,
// N bytes of JSON {name: {dtype, shape, data_offsets}, "__metadata__": {str: str}},
// then the raw little-endian tensor bytes.
//
// The reader maps the file and treats it as hostile: every length, name, shape and
// offset in the header is checked against the file before any byte of data is
// touched, and every failure is a headscope::Error naming the file and the tensor.

#include "core/base/output_file.h"
#include "core/tensor/dtype.h"
#include "core/tensor/matrix.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace headscope {

// Shapes are lists of dimensions, outermost first, as in PyTorch.
using Shape = std::vector<std::int64_t>;
std::string shape_to_string(const Shape& shape);   // "[2, 3, 4]"
std::int64_t shape_numel(const Shape& shape);

// One tensor of a mapped file: a view that is valid while its SafetensorsFile lives.
struct TensorView {
    std::string name;
    DType dtype = DType::F32;
    Shape shape;
    std::span<const std::byte> bytes;

    std::int64_t numel() const { return shape_numel(shape); }
    // All elements converted to float, in storage (row-major) order.
    std::vector<float> to_floats() const;
};

class SafetensorsFile {
public:
    // Maps and validates `path`; throws headscope::Error on any problem.
    static SafetensorsFile open(const std::string& path);

    SafetensorsFile(SafetensorsFile&&) noexcept;
    SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
    ~SafetensorsFile();

    const std::string& path() const { return path_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    const std::vector<TensorView>& tensors() const { return tensors_; }   // sorted by name

    bool contains(const std::string& name) const { return find(name) != nullptr; }
    const TensorView* find(const std::string& name) const;
    // Throws "<file>: no tensor '<name>'" when absent.
    const TensorView& get(const std::string& name) const;

    // The tensor as a float matrix: rank 2 as is, rank 1 as one row. Throws when the
    // rank is neither. Every dtype is accepted and converted.
    Matrix matrix(const std::string& name) const;

    // Throws when the file at path() is no longer the one mapped (other size, time or
    // inode, or gone). A file cut short in place after mapping (save_pretrained into the
    // same folder truncates it) would make the next read of a dropped page a SIGBUS;
    // whoever reads the mapping long after open() asks this first.
    void check_unchanged() const;

private:
    SafetensorsFile() = default;

    // What identified the file when it was mapped.
    struct Identity {
        std::uint64_t device = 0;
        std::uint64_t inode = 0;
        std::int64_t size = 0;
        std::int64_t modified_ns = 0;
        bool operator==(const Identity&) const = default;
    };
    Identity identity_;

    std::string path_;
    void* mapping_ = nullptr;
    std::size_t mapping_size_ = 0;
    std::map<std::string, std::string> metadata_;
    std::vector<TensorView> tensors_;
};

// Validates a header and data section held in memory (what open() does after mapping);
// `file_label` names the source in error messages. Exposed for the fuzzers and tests.
struct ParsedHeader {
    std::map<std::string, std::string> metadata;
    std::vector<TensorView> tensors;   // sorted by name; bytes point into `file`
};
ParsedHeader parse_safetensors(std::span<const std::byte> file, const std::string& file_label);

// A tensor to write: the caller owns the bytes until write_safetensors returns.
struct TensorToWrite {
    std::string name;
    DType dtype = DType::F32;
    Shape shape;
    std::span<const std::byte> bytes;
};
TensorToWrite tensor_f32(std::string name, Shape shape, std::span<const float> values);
TensorToWrite tensor_i64(std::string name, Shape shape, std::span<const std::int64_t> values);

// Serialises tensors (and optional metadata) to the safetensors byte layout.
std::vector<std::byte> encode_safetensors(const std::vector<TensorToWrite>& tensors,
                                          const std::map<std::string, std::string>& metadata = {});

// A safetensors file written piece by piece, for outputs too large to hold whole (every
// head's map of a long input): the header is known first (names, dtypes, shapes), then
// each tensor's bytes are written at their place as they are computed, in any order. The
// file appears at `path` on finish(), complete; until then (and if anything fails, or
// finish() is never reached) `path` is untouched, as write_safetensors() leaves it.
class SafetensorsWriter {
public:
    struct Entry {
        std::string name;
        DType dtype = DType::F32;
        Shape shape;
    };
    SafetensorsWriter(const std::string& path, std::vector<Entry> tensors,
                      const std::map<std::string, std::string>& metadata = {});
    // `bytes` at `offset` bytes into tensor `name`'s data.
    void write(const std::string& name, std::uint64_t offset, std::span<const std::byte> bytes);
    // Throws when a tensor's bytes were not all written; else puts the file in place.
    void finish();

private:
    std::vector<Entry> tensors_;
    std::vector<std::uint64_t> offsets_;   // each tensor's data, from the data's start
    std::vector<std::uint64_t> written_;   // bytes written per tensor
    std::uint64_t data_start_ = 0;
    AtomicOutput out_;
};

// Writes the file atomically: into a temporary file in the same folder, renamed over
// `path` only once complete. On failure `path` is left exactly as it was.
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}   // namespace headscope
