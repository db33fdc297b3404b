#include "core/models/hf/tensors.h"

#include "core/base/error.h"
#include "core/base/shown.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

namespace headscope {

namespace {

std::string in_quotes(const std::string& s) {
    std::string text = "'";   // built in steps: GCC 12 mis-warns (-Wrestrict) on "'" + std::string
    text += shown(s);
    text += "'";
    return text;
}

}   // namespace

HfTensorTable::HfTensorTable(const HfWeights& weights, std::string prefix, std::string folder,
                             const LoadControl& control)
    : prefix_(std::move(prefix)), folder_(std::move(folder)), description_(weights.description()), control_(control) {
    for (const auto& [stored, entry] : weights.tensors()) {
        std::string name = stored;
        if (name.rfind(prefix_, 0) == 0) name.erase(0, prefix_.size());
        for (const auto& [from, to] : {std::pair<std::string, std::string>{".gamma", ".weight"}, {".beta", ".bias"}}) {
            if (name.size() > from.size() && name.compare(name.size() - from.size(), from.size(), from) == 0) {
                name.replace(name.size() - from.size(), from.size(), to);
            }
        }
        total_bytes_ += entry.tensor->bytes.size();
        const auto [it, inserted] = by_name_.emplace(name, Stored{stored, entry});
        if (!inserted) {
            throw Error(entry.file + ": tensors " + in_quotes(it->second.stored_name) + " and " + in_quotes(stored) +
                        " are the same weight " + in_quotes(name));
        }
    }
    control_.report(0.0);
}

const HfTensorTable::Stored& HfTensorTable::checked(const std::string& name, const Shape& expected,
                                                    const std::string& why) {
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) {
        const std::string names =
            prefix_.empty() ? in_quotes(name) : in_quotes(prefix_ + name) + " (nor " + in_quotes(name) + ")";
        throw Error(folder_ + ": " + description_ + " has no tensor " + names + "; expected shape " +
                    shape_to_string(expected) + " (" + why + ")");
    }
    const TensorView& t = *it->second.entry.tensor;
    const std::string where = it->second.entry.file + ": tensor " + in_quotes(it->second.stored_name);
    if (!dtype_is_float(t.dtype)) {
        throw Error(where + " has dtype " + std::string(dtype_name(t.dtype)) + ", expected F32, F16, BF16 or F64");
    }
    if (t.shape != expected) {
        throw Error(where + " has shape " + shape_to_string(t.shape) + ", expected " + shape_to_string(expected) +
                    " (" + why + ")");
    }
    taken_.insert(name);
    n_parameters_ += t.numel();
    return it->second;
}

void HfTensorTable::report_read(const Stored& s) {
    const TensorView& t = *s.entry.tensor;
    if (const std::int64_t bad = count_non_finite(t.dtype, t.bytes.data(), static_cast<std::size_t>(t.numel()));
        bad > 0) {
        warnings_.push_back(s.entry.file + ": tensor " + in_quotes(s.stored_name) + " holds " + std::to_string(bad) +
                            (bad == 1 ? " non-finite value" : " non-finite values") +
                            " (NaN or Inf); the maps show the cells it reaches as not finite");
    }
    taken_bytes_ += t.bytes.size();
    control_.report(total_bytes_ > 0 ? static_cast<double>(taken_bytes_) / static_cast<double>(total_bytes_) : 1.0);
}

std::vector<float> HfTensorTable::take(const std::string& name, const Shape& expected, const std::string& why) {
    const Stored& s = checked(name, expected, why);
    std::vector<float> values = s.entry.tensor->to_floats();
    report_read(s);
    return values;
}

WeightMatrix HfTensorTable::weight_as_stored(const std::string& name, const Shape& shape, Eigen::Index stored_rows,
                                             Eigen::Index stored_cols, bool transposed, const std::string& why) {
    const Stored& s = checked(name, shape, why);
    const TensorView& t = *s.entry.tensor;
    const bool sixteen_bits = t.dtype == DType::BF16 || t.dtype == DType::F16;
    const std::size_t alignment = t.dtype == DType::F32 ? alignof(float) : alignof(std::uint16_t);
    const bool aligned = reinterpret_cast<std::uintptr_t>(t.bytes.data()) % alignment == 0;
    if ((t.dtype == DType::F32 || sixteen_bits) && aligned) {
        // Read in place, in the width stored (safetensors is little-endian, as is every
        // machine this builds for): a BF16 checkpoint costs its own size, not twice it.
        static_assert(std::endian::native == std::endian::little);
        // Fault the pages in now: the disk is read while the progress bar moves.
        constexpr std::size_t page = 4096;
        volatile std::byte sink{};
        for (std::size_t i = 0; i < t.bytes.size(); i += page) sink = t.bytes[i];
        (void)sink;
        report_read(s);
        if (sixteen_bits) {
            return WeightMatrix::view(s.entry.owner, reinterpret_cast<const std::uint16_t*>(t.bytes.data()), t.dtype,
                                      stored_rows, stored_cols, stored_cols, transposed, true);
        }
        return WeightMatrix::view(s.entry.owner, reinterpret_cast<const float*>(t.bytes.data()), stored_rows,
                                  stored_cols, stored_cols, transposed, true);
    }
    auto values = std::make_shared<const std::vector<float>>(t.to_floats());
    report_read(s);
    const float* data = values->data();
    return WeightMatrix::view(std::move(values), data, stored_rows, stored_cols, stored_cols, transposed, false);
}

WeightMatrix HfTensorTable::weight(const std::string& name, Eigen::Index rows, Eigen::Index cols,
                                   const std::string& why, Shape shape) {
    if (shape.empty()) shape = {rows, cols};
    return weight_as_stored(name, shape, rows, cols, false, why);
}

Matrix HfTensorTable::matrix(const std::string& name, Eigen::Index rows, Eigen::Index cols, const std::string& why,
                             Shape shape) {
    if (shape.empty()) shape = {rows, cols};
    const std::vector<float> v = take(name, shape, why);
    return Eigen::Map<const Matrix>(v.data(), rows, cols);
}

Vector HfTensorTable::vector(const std::string& name, Eigen::Index n, const std::string& why) {
    const std::vector<float> v = take(name, {n}, why);
    return Eigen::Map<const Vector>(v.data(), n);
}

RowVector HfTensorTable::token(const std::string& name, Eigen::Index n, const std::string& why) {
    const std::vector<float> v = take(name, {1, 1, n}, why);
    return Eigen::Map<const RowVector>(v.data(), n);
}

Linear HfTensorTable::linear(const std::string& prefix, Eigen::Index out, Eigen::Index in, const std::string& why,
                             bool bias) {
    Linear l;
    l.weight = weight(prefix + ".weight", out, in, why);
    if (bias) l.bias = vector(prefix + ".bias", out, why);
    return l;
}

Linear HfTensorTable::conv1d(const std::string& prefix, Eigen::Index in, Eigen::Index out, const std::string& why) {
    Linear l;
    l.weight = weight_as_stored(prefix + ".weight", {in, out}, in, out, true, why);
    l.bias = vector(prefix + ".bias", out, why);
    return l;
}

WeightMatrix HfTensorTable::transposed_weight(const std::string& name, Eigen::Index out, Eigen::Index in,
                                              const std::string& why) {
    return weight_as_stored(name, {in, out}, in, out, true, why);
}

WeightMatrix HfTensorTable::permuted_weight(const std::string& name, Eigen::Index rows, Eigen::Index cols,
                                            const std::string& why, const RowOrder& stored_row) {
    const Stored& s = checked(name, {rows, cols}, why);
    const TensorView& t = *s.entry.tensor;
    report_read(s);
    const auto row_bytes = static_cast<std::size_t>(cols) * dtype_size(t.dtype);
    const auto from = [&](Eigen::Index r) {
        return t.bytes.data() + static_cast<std::size_t>(stored_row[static_cast<std::size_t>(r)]) * row_bytes;
    };
    if (t.dtype == DType::BF16 || t.dtype == DType::F16) {
        auto held = std::make_shared<std::vector<std::uint16_t>>(static_cast<std::size_t>(rows * cols));
        for (Eigen::Index r = 0; r < rows; ++r) {
            std::memcpy(held->data() + static_cast<std::size_t>(r * cols), from(r), row_bytes);
        }
        const std::uint16_t* data = held->data();
        return WeightMatrix::view(std::move(held), data, t.dtype, rows, cols, cols, false);
    }
    Matrix held(rows, cols);
    for (Eigen::Index r = 0; r < rows; ++r) {
        convert_to_float(t.dtype, from(r), std::span(held.row(r).data(), static_cast<std::size_t>(cols)));
    }
    return WeightMatrix(std::move(held));
}

void HfTensorTable::check_all_taken(const std::set<std::string>& ignorable, const std::string& architecture) const {
    for (const auto& [name, stored] : by_name_) {
        if (taken_.count(name) != 0 || ignorable.count(name) != 0) continue;
        throw Error(stored.entry.file + ": unexpected tensor " + in_quotes(stored.stored_name) + " (not part of " +
                    architecture + "; a typo, or another model's weights?)");
    }
}

void hf_check_length(std::size_t n, Eigen::Index max_tokens, const std::string& what, const std::string& model,
                     const std::string& limit_field, bool at_least) {
    if (static_cast<Eigen::Index>(n) > max_tokens) {
        throw Error((what.empty() ? "" : what + ": ") + (at_least ? "at least " : "") + std::to_string(n) +
                    " tokens, more than " + model + "'s limit of " + std::to_string(max_tokens) +
                    " (config.json: " + limit_field + ")");
    }
}

void hf_check_token_ids(std::span<const std::int64_t> ids, Eigen::Index vocab_size, Eigen::Index max_tokens,
                        const std::string& model, const std::string& limit_field, const std::string& vocab_field,
                        const std::string& what) {
    const std::string prefix = what.empty() ? "" : what + ": ";
    if (ids.empty()) throw Error(prefix + "no token ids given");
    hf_check_length(ids.size(), max_tokens, what, model, limit_field);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= vocab_size) {
            throw Error(prefix + "id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                        " is outside 0.." + std::to_string(vocab_size - 1) + " (config.json: " + vocab_field + ")");
        }
    }
}

void hf_check_text_token(const std::string& label, std::int64_t id, Eigen::Index vocab_size, const std::string& model,
                         const std::string& files) {
    if (id < 0 || id >= vocab_size) {
        throw Error("text: token " + in_quotes(label) + " has id " + std::to_string(id) + ", but " + model +
                    " has vocab_size = " + std::to_string(vocab_size) + " (" + files + " and weights disagree)");
    }
}

std::string hf_number_text(double value) {
    std::ostringstream s;
    s << value;
    return s.str();
}

}   // namespace headscope
