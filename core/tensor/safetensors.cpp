#include "core/tensor/safetensors.h"

#include "core/base/error.h"
#include "core/base/json_file.h"
#include "core/base/output_file.h"
#include "core/base/shown.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headscope {

namespace {

using json = nlohmann::json;

// The reference implementation refuses headers over 100 MB; so do we, before parsing.
constexpr std::uint64_t max_header_bytes = 100'000'000;
// A valid header nests three deep (header -> entry -> shape); anything much deeper is
// hostile, and deep values would make recursive code (printing them) overflow the stack.
constexpr int max_header_depth = 4;
// Real checkpoints hold at most a few thousand tensors per file (DeepSeek V3's 91,000 are
// spread over 163 shards); each entry parsed costs a few hundred bytes, so past this a
// header is hostile, not large.
constexpr std::size_t max_tensors_per_header = 200'000;
// Real names are dotted paths of under 200 bytes; a longer one is not a name.
constexpr std::size_t max_tensor_name_bytes = 4096;
// No tensor element count or byte size may reach this; keeps products from overflowing.
constexpr std::uint64_t max_count = std::uint64_t{1} << 62;

std::uint64_t read_u64_le(const std::byte* bytes) {
    std::uint64_t value;
    std::memcpy(&value, bytes, sizeof value);
    return value;
}

// A tensor name as messages show it (a file may hold a 10 MB name): quoted, cut, escaped.
std::string quoted(const std::string& name) {
    std::string text(1, '\'');
    text += shown(name);
    text += '\'';
    return text;
}

// A short, non-recursive rendering of a header value for messages: scalars and short
// flat arrays as JSON, anything else by its type.
std::string brief(const json& value) {
    if (value.is_primitive()) {
        std::string text = value.dump();
        return text.size() > 40 ? text.substr(0, 40) + "..." : text;
    }
    if (value.is_array() && value.size() <= 8) {
        std::string text = "[";
        for (const json& item : value) {
            if (!item.is_primitive()) return "an array of arrays or objects";
            text.append(text.size() > 1 ? ", " : "").append(brief(item));
        }
        return text + "]";
    }
    return std::string("a JSON ") + value.type_name() + (value.is_array() ? " of " + std::to_string(value.size()) : "");
}

// Reads one non-negative integer of a header field, or throws naming it.
std::uint64_t header_uint(const json& value, const std::string& where) {
    if (!value.is_number_unsigned()) {
        throw Error(where + ": expected a non-negative integer, got " + brief(value));
    }
    return value.get<std::uint64_t>();
}

TensorView parse_tensor_entry(const std::string& name, const json& entry, std::span<const std::byte> data,
                              const std::string& file_label) {
    const std::string where = file_label + ": tensor " + quoted(name);
    if (!entry.is_object()) {
        throw Error(where + ": expected an object with dtype, shape and data_offsets");
    }
    for (const char* field : {"dtype", "shape", "data_offsets"}) {
        if (!entry.contains(field)) throw Error(where + ": missing field '" + field + "'");
    }

    const json& dtype_field = entry["dtype"];
    if (!dtype_field.is_string()) throw Error(where + ": dtype must be a string");
    const auto dtype = dtype_from_name(dtype_field.get<std::string>());
    if (!dtype) {
        throw Error(where + ": unsupported dtype '" + dtype_field.get<std::string>() +
                    "' (expected F32, F16, BF16, F64, I64, I32, U8 or BOOL)");
    }

    const json& shape_field = entry["shape"];
    if (!shape_field.is_array()) throw Error(where + ": shape must be an array");
    Shape shape;
    std::uint64_t numel = 1;
    for (const json& dim : shape_field) {
        const std::uint64_t d = header_uint(dim, where + ": shape");
        if (d >= max_count || (d != 0 && numel > max_count / d)) {
            throw Error(where + ": shape " + brief(shape_field) + " is too large");
        }
        numel *= d;
        shape.push_back(static_cast<std::int64_t>(d));
    }
    const std::uint64_t element_size = dtype_size(*dtype);
    if (numel > max_count / element_size) {
        throw Error(where + ": shape " + brief(shape_field) + " is too large");
    }
    const std::uint64_t expected_bytes = numel * element_size;

    const json& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2) {
        throw Error(where + ": data_offsets must be [begin, end]");
    }
    const std::uint64_t begin = header_uint(offsets[0], where + ": data_offsets");
    const std::uint64_t end = header_uint(offsets[1], where + ": data_offsets");
    if (begin > end) {
        throw Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                    "] end before they begin");
    }
    if (end > data.size()) {
        throw Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                    "] run past the end of the data (" + std::to_string(data.size()) + " bytes)");
    }
    if (end - begin != expected_bytes) {
        throw Error(where + ": shape " + shape_to_string(shape) + " of " + std::string(dtype_name(*dtype)) + " needs " +
                    std::to_string(expected_bytes) + " bytes, data_offsets give " + std::to_string(end - begin));
    }

    TensorView view;
    view.name = name;
    view.dtype = *dtype;
    view.shape = std::move(shape);
    view.bytes = data.subspan(begin, end - begin);
    return view;
}

std::map<std::string, std::string> parse_metadata(const json& value, const std::string& file_label) {
    if (!value.is_object()) throw Error(file_label + ": __metadata__ must be an object of strings");
    std::map<std::string, std::string> metadata;
    for (const auto& [key, item] : value.items()) {
        if (!item.is_string()) {
            throw Error(file_label + ": __metadata__ " + quoted(key) + " must be a string");
        }
        metadata[key] = item.get<std::string>();
    }
    return metadata;
}

}   // namespace

std::string shape_to_string(const Shape& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) text += ", ";
        text += std::to_string(shape[i]);
    }
    return text + "]";
}

std::int64_t shape_numel(const Shape& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
}

std::vector<float> TensorView::to_floats() const {
    std::vector<float> values(static_cast<std::size_t>(numel()));
    convert_to_float(dtype, bytes.data(), values);
    return values;
}

ParsedHeader parse_safetensors(std::span<const std::byte> file, const std::string& file_label) {
    if (file.empty()) throw Error(file_label + ": file is empty, expected a safetensors file");
    if (file.size() < 8) {
        throw Error(file_label + ": file is " + std::to_string(file.size()) +
                    " bytes, too short for a safetensors header length (8 bytes)");
    }
    const std::uint64_t header_length = read_u64_le(file.data());
    if (header_length > file.size() - 8) {
        throw Error(file_label + ": header length " + std::to_string(header_length) +
                    " runs past the end of the file (" + std::to_string(file.size()) + " bytes)");
    }
    if (header_length > max_header_bytes) {
        throw Error(file_label + ": header length " + std::to_string(header_length) + " exceeds the 100 MB limit");
    }
    const auto header_bytes = file.subspan(8, header_length);
    const auto data = file.subspan(8 + header_length);

    // One linear pass (json_file.h) that refuses deep nesting, NUL bytes and names given
    // twice (JSON keeps the last silently, which would let a bad first entry skip every check).
    JsonLimits limits;
    limits.max_bytes = max_header_bytes;
    limits.max_depth = max_header_depth;
    limits.max_entries = max_tensors_per_header;
    const json header =
        parse_json_text(std::string_view(reinterpret_cast<const char*>(header_bytes.data()), header_bytes.size()),
                        file_label + ": header", limits);
    if (!header.is_object()) throw Error(file_label + ": header must be a JSON object");

    ParsedHeader parsed;
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            parsed.metadata = parse_metadata(entry, file_label);
        } else {
            if (name.size() > max_tensor_name_bytes) {
                throw Error(file_label + ": tensor " + quoted(name) + ": a name of " + std::to_string(name.size()) +
                            " bytes, more than the " + std::to_string(max_tensor_name_bytes) + " a name may have");
            }
            parsed.tensors.push_back(parse_tensor_entry(name, entry, data, file_label));
        }
    }

    // No two tensors may share bytes: sort by start and compare neighbours.
    std::vector<const TensorView*> by_offset;
    for (const auto& t : parsed.tensors) {
        if (!t.bytes.empty()) by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(),
              [](const TensorView* a, const TensorView* b) { return a->bytes.data() < b->bytes.data(); });
    for (std::size_t i = 1; i < by_offset.size(); ++i) {
        const TensorView& prev = *by_offset[i - 1];
        const TensorView& next = *by_offset[i];
        if (next.bytes.data() < prev.bytes.data() + prev.bytes.size()) {
            throw Error(file_label + ": tensor " + quoted(next.name) + ": data overlaps tensor " + quoted(prev.name));
        }
    }
    // nlohmann's object keeps keys sorted, so parsed.tensors already is by name.
    return parsed;
}

namespace {

// The identity fields of a stat result.
template <typename Identity>
Identity identity_of(const struct stat& info) {
    Identity id;
    id.device = static_cast<std::uint64_t>(info.st_dev);
    id.inode = static_cast<std::uint64_t>(info.st_ino);
    id.size = static_cast<std::int64_t>(info.st_size);
    id.modified_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
    return id;
}

}   // namespace

void SafetensorsFile::check_unchanged() const {
    struct stat info {};
    if (::stat(path_.c_str(), &info) != 0) {
        throw Error(path_ + ": gone from disk since it was loaded (" + std::strerror(errno) +
                    "); open the model again");
    }
    if (!(identity_of<Identity>(info) == identity_)) {
        throw Error(path_ + ": changed on disk since it was loaded; open the model again");
    }
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int error = errno;
        throw Error(path + (error == ENOENT ? std::string(": no such file")
                                            : std::string(": cannot open (") + std::strerror(error) + ")"));
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        throw Error(path + ": cannot open (" + std::strerror(error) + ")");
    }
    if (S_ISDIR(info.st_mode)) {
        ::close(fd);
        throw Error(path + ": is a directory, expected a .safetensors file");
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        throw Error(path + ": is not a regular file, expected a .safetensors file");
    }

    SafetensorsFile file;
    file.path_ = path;
    file.identity_ = identity_of<Identity>(info);
    file.mapping_size_ = static_cast<std::size_t>(info.st_size);
    if (file.mapping_size_ > 0) {
        void* mapping = ::mmap(nullptr, file.mapping_size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapping == MAP_FAILED) {
            const int error = errno;
            ::close(fd);
            throw Error(path + ": cannot map: " + std::strerror(error));
        }
        file.mapping_ = mapping;
    }
    ::close(fd);   // the mapping stays valid without the descriptor

    const std::span<const std::byte> bytes(static_cast<const std::byte*>(file.mapping_), file.mapping_size_);
    ParsedHeader parsed = parse_safetensors(bytes, path);
    file.metadata_ = std::move(parsed.metadata);
    file.tensors_ = std::move(parsed.tensors);
    return file;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : identity_(other.identity_), path_(std::move(other.path_)), mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)), metadata_(std::move(other.metadata_)),
      tensors_(std::move(other.tensors_)) {}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
    if (this != &other) {
        if (mapping_) ::munmap(mapping_, mapping_size_);
        path_ = std::move(other.path_);
        mapping_ = std::exchange(other.mapping_, nullptr);
        mapping_size_ = std::exchange(other.mapping_size_, 0);
        metadata_ = std::move(other.metadata_);
        tensors_ = std::move(other.tensors_);
        identity_ = other.identity_;
    }
    return *this;
}

SafetensorsFile::~SafetensorsFile() {
    if (mapping_) ::munmap(mapping_, mapping_size_);
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
    auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                               [](const TensorView& t, const std::string& n) { return t.name < n; });
    return (it != tensors_.end() && it->name == name) ? &*it : nullptr;
}

const TensorView& SafetensorsFile::get(const std::string& name) const {
    const TensorView* view = find(name);
    if (!view) throw Error(path_ + ": no tensor " + quoted(name));
    return *view;
}

Matrix SafetensorsFile::matrix(const std::string& name) const {
    const TensorView& view = get(name);
    if (view.shape.size() != 1 && view.shape.size() != 2) {
        throw Error(path_ + ": tensor " + quoted(name) + ": expected a matrix or vector, got shape " +
                    shape_to_string(view.shape));
    }
    const Eigen::Index rows = view.shape.size() == 2 ? view.shape[0] : 1;
    const Eigen::Index cols = view.shape.back();
    Matrix m(rows, cols);
    convert_to_float(view.dtype, view.bytes.data(), std::span<float>(m.data(), static_cast<std::size_t>(m.size())));
    return m;
}

TensorToWrite tensor_f32(std::string name, Shape shape, std::span<const float> values) {
    return {std::move(name), DType::F32, std::move(shape), std::as_bytes(values)};
}

TensorToWrite tensor_i64(std::string name, Shape shape, std::span<const std::int64_t> values) {
    return {std::move(name), DType::I64, std::move(shape), std::as_bytes(values)};
}

namespace {

// The header (padded so the data starts 8-byte aligned, as the reference writer does) of
// tensors of these shapes, in this order, and where each one's bytes start after it.
std::string encode_header(const std::vector<SafetensorsWriter::Entry>& tensors,
                          const std::map<std::string, std::string>& metadata, std::vector<std::uint64_t>& offsets) {
    json header = json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::uint64_t offset = 0;
    offsets.clear();
    for (const auto& t : tensors) {
        if (t.name == "__metadata__" || header.contains(t.name)) {
            throw Error("tensor " + quoted(t.name) + ": name used twice");
        }
        const std::uint64_t size = static_cast<std::uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
        header[t.name] = {
            {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + size}}};
        offsets.push_back(offset);
        offset += size;
    }
    std::string text = header.dump();
    text.append((8 - (text.size() % 8)) % 8, ' ');
    const std::uint64_t header_length = text.size();
    std::string framed(8, '\0');
    std::memcpy(framed.data(), &header_length, 8);
    return framed + text;
}

}   // namespace

std::vector<std::byte> encode_safetensors(const std::vector<TensorToWrite>& tensors,
                                          const std::map<std::string, std::string>& metadata) {
    std::vector<SafetensorsWriter::Entry> entries;
    std::uint64_t data_size = 0;
    for (const auto& t : tensors) {
        const std::uint64_t expected = static_cast<std::uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
        if (expected != t.bytes.size()) {
            throw Error("tensor " + quoted(t.name) + ": shape " + shape_to_string(t.shape) + " needs " +
                        std::to_string(expected) + " bytes, got " + std::to_string(t.bytes.size()));
        }
        entries.push_back({t.name, t.dtype, t.shape});
        data_size += expected;
    }
    std::vector<std::uint64_t> offsets;
    const std::string header = encode_header(entries, metadata, offsets);
    std::vector<std::byte> out(header.size() + data_size);
    std::memcpy(out.data(), header.data(), header.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        if (!tensors[i].bytes.empty()) {
            std::memcpy(out.data() + header.size() + offsets[i], tensors[i].bytes.data(), tensors[i].bytes.size());
        }
    }
    return out;
}

SafetensorsWriter::SafetensorsWriter(const std::string& path, std::vector<Entry> tensors,
                                     const std::map<std::string, std::string>& metadata)
    : tensors_(std::move(tensors)), written_(tensors_.size(), 0), out_(path) {
    const std::string header = encode_header(tensors_, metadata, offsets_);
    data_start_ = header.size();
    out_.write_at(0, std::as_bytes(std::span(header)));
}

void SafetensorsWriter::write(const std::string& name, std::uint64_t offset, std::span<const std::byte> bytes) {
    const auto it = std::find_if(tensors_.begin(), tensors_.end(), [&](const Entry& t) { return t.name == name; });
    if (it == tensors_.end()) throw Error("tensor " + quoted(name) + ": not in the file's header");
    const auto i = static_cast<std::size_t>(it - tensors_.begin());
    const std::uint64_t size = static_cast<std::uint64_t>(shape_numel(it->shape)) * dtype_size(it->dtype);
    if (offset > size || bytes.size() > size - offset) {
        throw Error("tensor " + quoted(name) + ": bytes [" + std::to_string(offset) + ", " +
                    std::to_string(offset + bytes.size()) + ") outside its " + std::to_string(size));
    }
    out_.write_at(data_start_ + offsets_[i] + offset, bytes);
    written_[i] += bytes.size();
}

void SafetensorsWriter::finish() {
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const Entry& t = tensors_[i];
        const std::uint64_t size = static_cast<std::uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
        if (written_[i] != size) {
            throw Error("tensor " + quoted(t.name) + ": " + std::to_string(written_[i]) + " of its " +
                        std::to_string(size) + " bytes written");
        }
    }
    out_.commit();
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    write_file_atomically(path, encode_safetensors(tensors, metadata));
}

}   // namespace headscope
