#pragma once
// A checkpoint's tensors by transformers' module names, for the Hugging Face loaders:
// the prefix a task model stores its backbone under ("vit.", "deit.", "transformer.", "bert.")
// is dropped and TensorFlow-era Norm "gamma" / "beta" read as "weight" / "bias".
// Every tensor taken is checked (floating dtype, exact shape, with both shapes and the
// config fields behind the expected one in the message), and whatever is left untaken
// can be reported as unknown.

#include "core/base/load_control.h"
#include "core/models/hf/weight_files.h"
#include "core/models/model.h"
#include "core/models/tensor_binder.h"
#include "core/nn/attention.h"
#include "core/nn/layers.h"

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace headscope {

class HfTensorTable {
public:
    // Reports to `control` the fraction of the stored bytes taken so far (and stops when it says so).
    HfTensorTable(const HfWeights& weights, std::string prefix, std::string folder, const LoadControl& control = {});

    bool has(const std::string& name) const { return by_name_.count(name) != 0; }

    // The tensor's values as float, after checking its dtype and shape. `why` says
    // where the expected shape comes from (config.json fields), for the message.
    std::vector<float> take(const std::string& name, const Shape& expected, const std::string& why);

    Matrix matrix(const std::string& name, Eigen::Index rows, Eigen::Index cols, const std::string& why,
                  Shape shape = {});
    // A weight [rows, cols] (stored with `shape`, default [rows, cols]): F32, BF16 and F16
    // tensors are read in place from the mapped file, in their own width (their pages
    // touched now, so the disk is read while the progress shows, not at the first
    // forward); F64 is converted to float once.
    WeightMatrix weight(const std::string& name, Eigen::Index rows, Eigen::Index cols, const std::string& why,
                        Shape shape = {});
    Vector vector(const std::string& name, Eigen::Index n, const std::string& why);
    RowVector token(const std::string& name, Eigen::Index n, const std::string& why);   // stored [1, 1, n]
    Linear linear(const std::string& prefix, Eigen::Index out, Eigen::Index in, const std::string& why,
                  bool bias = true);
    // GPT-2's Conv1D (weight stored [in, out], bias [out]) as a Linear [out, in], read in
    // place: its WeightMatrix knows the memory holds the transpose.
    Linear conv1d(const std::string& prefix, Eigen::Index in, Eigen::Index out, const std::string& why);
    // A weight [out, in] stored transposed ([in, out], as Conv1D), read in place.
    WeightMatrix transposed_weight(const std::string& name, Eigen::Index out, Eigen::Index in, const std::string& why);
    // A weight [rows, cols] whose row r is stored row `stored_row[r]` (GPT-NeoX's packed
    // per-head q, k, v): copied in that order, in the width stored for BF16 and F16.
    WeightMatrix permuted_weight(const std::string& name, Eigen::Index rows, Eigen::Index cols, const std::string& why,
                                 const RowOrder& stored_row);

    // Throws for the first tensor nobody took, unless `ignorable` names it.
    void check_all_taken(const std::set<std::string>& ignorable, const std::string& architecture) const;

    std::int64_t n_parameters() const { return n_parameters_; }
    // One line per tensor taken so far that holds NaN or Inf: the model still loads
    // (the maps show those cells as not finite), and the user is warned which tensor.
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    struct Stored {
        std::string stored_name;
        HfWeights::Entry entry;
    };
    // Checks the tensor's dtype and shape and counts it as taken.
    const Stored& checked(const std::string& name, const Shape& expected, const std::string& why);
    // Counts the tensor's bytes as read, reports the progress, and notes non-finite values.
    void report_read(const Stored& s);
    WeightMatrix weight_as_stored(const std::string& name, const Shape& shape, Eigen::Index stored_rows,
                                  Eigen::Index stored_cols, bool transposed, const std::string& why);
    std::string prefix_;
    std::string folder_;
    std::string description_;
    std::map<std::string, Stored> by_name_;
    std::set<std::string> taken_;
    std::int64_t n_parameters_ = 0;
    std::vector<std::string> warnings_;
    LoadControl control_;
    std::size_t total_bytes_ = 0;
    std::size_t taken_bytes_ = 0;
};

// The binder that loads a family's tensors from a checkpoint (core/models/tensor_binder.h).
class HfTensorLoader {
public:
    explicit HfTensorLoader(HfTensorTable& table) : table_(table) {}
    bool present(const std::string& name, bool) const { return table_.has(name); }
    void weight(const std::string& name, WeightMatrix& w, Eigen::Index rows, Eigen::Index cols, const std::string& why,
                Shape stored = {}) {
        w = table_.weight(name, rows, cols, why, std::move(stored));
    }
    void transposed_weight(const std::string& name, WeightMatrix& w, Eigen::Index out, Eigen::Index in,
                           const std::string& why) {
        w = table_.transposed_weight(name, out, in, why);
    }
    void matrix(const std::string& name, Matrix& m, Eigen::Index rows, Eigen::Index cols, const std::string& why,
                Shape stored = {}) {
        m = table_.matrix(name, rows, cols, why, std::move(stored));
    }
    void permuted_weight(const std::string& name, WeightMatrix& w, Eigen::Index rows, Eigen::Index cols,
                         const std::string& why, const RowOrder& stored_row) {
        w = table_.permuted_weight(name, rows, cols, why, stored_row);
    }
    void permuted_vector(const std::string& name, Vector& v, Eigen::Index n, const std::string& why,
                         const RowOrder& stored_row) {
        const Vector stored = table_.vector(name, n, why);
        v.resize(n);
        for (Eigen::Index r = 0; r < n; ++r) v(r) = stored(stored_row[static_cast<std::size_t>(r)]);
    }
    void vector(const std::string& name, Vector& v, Eigen::Index n, const std::string& why, Shape stored = {}) {
        if (stored.empty()) {
            v = table_.vector(name, n, why);
        } else {
            const std::vector<float> values = table_.take(name, stored, why);
            v = Eigen::Map<const Vector>(values.data(), n);
        }
    }
    // A 0-dimensional tensor (shape []).
    void scalar(const std::string& name, float& value, const std::string& why) {
        value = table_.take(name, Shape{}, why).at(0);
    }

private:
    HfTensorTable& table_;
};

// The files a model reads its weights from in place. check() refuses (one line, "open
// the model again") when one was rewritten on disk since loading, before a read of a
// dropped page could end the process with SIGBUS. Loaders call it at the start of each
// forward and embedding lookup; a rewrite during a forward is not caught.
class HfMappedFiles {
public:
    HfMappedFiles() = default;
    explicit HfMappedFiles(const HfWeights& weights) : files_(weights.files()) {}
    void check() const {
        for (const auto& file : files_) file->check_unchanged();
    }

private:
    std::vector<std::shared_ptr<const SafetensorsFile>> files_;
};

// The checks the Hugging Face text models share. `model` names the model in messages,
// `limit_field` the config.json field behind `max_tokens` (n_positions, ...).
// Throws when `n` tokens are more than `max_tokens` ("text: 40 tokens, more than ...").
// `at_least`: n is a lower bound (the tokenizer stopped early, TooManyTokens).
void hf_check_length(std::size_t n, Eigen::Index max_tokens, const std::string& what, const std::string& model,
                     const std::string& limit_field, bool at_least = false);
// --tokens: not empty, not too long, every id in 0..vocab_size-1 (`vocab_field` the field
// behind it). Messages start with `what` ("--tokens: "); "" for none (a label's ids, whose
// caller names the flag and the label).
void hf_check_token_ids(std::span<const std::int64_t> ids, Eigen::Index vocab_size, Eigen::Index max_tokens,
                        const std::string& model, const std::string& limit_field,
                        const std::string& vocab_field = "vocab_size", const std::string& what = "--tokens");
// A token the folder's tokenizer produced has an id the weights have (`files` names the tokenizer's files).
void hf_check_text_token(const std::string& label, std::int64_t id, Eigen::Index vocab_size, const std::string& model,
                         const std::string& files);

// A config number as messages and `info` print it (shortest round form, e.g. 1e-12).
std::string hf_number_text(double value);

}   // namespace headscope
