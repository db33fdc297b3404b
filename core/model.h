#pragma once
// The Model interface: what turns a sentence, an image or token ids into the
// sequence a stack of attention layers consumes, runs it, and reports every layer's
// attention. Built-in demo models and (later) Hugging Face checkpoints implement it.

#include "core/attention.h"
#include "core/image.h"
#include "core/mask.h"
#include "core/matrix.h"
#include "core/safetensors.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace headscope {

struct ModelInfo {
    std::string name;              // as given to --model, e.g. "builtin:toy-text"
    std::string description;       // one line
    Eigen::Index n_layers = 0;     // L
    Eigen::Index n_heads = 0;      // H
    Eigen::Index width = 0;        // E
    Eigen::Index head_width = 0;   // Dh
    Eigen::Index mlp_width = 0;
    Eigen::Index max_tokens = 0;   // the longest sequence it takes
    bool takes_text = false;
    // A text checkpoint without (usable) tokenizer files: it reads token ids, not text.
    bool reads_ids_only = false;
    bool takes_image = false;
    bool causal = false;       // masks the future unless told otherwise
    bool classifier = false;   // logits are one row for the whole input ([1, labels]), not [T, V]
    int image_size = 0;        // square input side in pixels (image models)
    int patch_size = 0;        // P (image models)
    std::int64_t n_parameters = 0;
    // What each head was built to do ([L][H]; empty strings where nothing was built in).
    std::vector<std::vector<std::string>> head_roles;
    // Settings that reproduce the model (seed, init, bias, ...), for `info` and exports.
    std::map<std::string, std::string> settings;
    // What the user should know before trusting the maps (e.g. NaN in a weight), a line each.
    std::vector<std::string> warnings;
};

struct ModelInput {
    Matrix embeddings;                 // [T, E]: what the first layer consumes
    std::vector<std::string> labels;   // [T]: each position as a person reads it
    std::vector<std::int64_t> ids;     // [T] for text and ids; empty for images
    // For text: each token's byte span in the sentence ([T] pairs; special tokens get {0, 0}).
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    // For images: the patch grid, and how many tokens ([CLS], ...) come before the patches.
    int grid_width = 0;
    int grid_height = 0;
    int n_prefix_tokens = 0;
    RgbImage pixels;   // images: the picture as the model saw it (resized / cut), under the patch grid
};

// How an image model takes a picture.
struct ImageOptions {
    // false: resized to the model's input size, as its processor does (the default).
    // true: at the picture's own size, as DINO draws its high-resolution maps: shrunk
    // (keeping its aspect, with the processor's resample) only when it would give more
    // than `max_patches` patches, then cut at the bottom and right to whole patches;
    // the position embeddings are interpolated bicubically to that patch grid
    // (transformers' interpolate_pos_encoding).
    bool own_resolution = false;
    int max_patches = 1024;
};

struct ModelTrace;

struct RunOptions {
    std::optional<bool> causal;                      // overrides ModelInfo::causal
    OptionalMask keep;                               // [T, T] pairs allowed, ANDed with the causal mask
    std::vector<std::vector<bool>> disabled_heads;   // [L][H] or empty: ablated heads
    TraceDetail detail = TraceDetail::weights;       // every layer's
    // One layer that keeps every stage (TraceDetail::all_stages) whatever `detail` says;
    // -1: none. The window's Stages view shows one layer's stages, and keeping them for
    // all layers would triple the memory of a run (three [T, T] matrices per head).
    Eigen::Index stages_layer = -1;
    TraceDetail detail_at(Eigen::Index layer) const { return layer == stages_layer ? TraceDetail::all_stages : detail; }
    // Keep the residual stream entering each layer (ModelTrace::layer_inputs) and each
    // layer's keys and values (AttentionTrace::keys / values), so a later run can resume
    // from it or reuse its start.
    bool keep_layer_inputs = false;
    // Interactive work redoes only what changed: when only heads at layers >= resume_layer
    // are ablated differently from a previous run on the same input and mask (kept with
    // keep_layer_inputs), the layers before resume_layer are copied from it, not computed.
    const ModelTrace* resume_from = nullptr;
    Eigen::Index resume_layer = 0;
    // Causal models (GPT-2), when text was typed or edited at its end: the first
    // `prefix_rows` positions are the same tokens as in `prefix_from` (a run kept with
    // keep_layer_inputs, with the same options and detail), and a position sees none after
    // it, so their rows of every map, activation and logit are copied from it and only the
    // later rows are computed, against the earlier rows' kept keys and values.
    const ModelTrace* prefix_from = nullptr;
    Eigen::Index prefix_rows = 0;
};

struct ModelTrace {
    std::vector<AttentionTrace> layers;   // [L]
    OptionalMask mask;                    // [T, T], the same for every layer; absent = all allowed
    // [T, E] after the last layer (and final norm); only the rows a head reads when it
    // reads some alone (a ViT classifier: [1, E], [CLS]; DeiT's with a teacher: [2, E]).
    Matrix hidden;
    Matrix logits;                      // [T, V] or [1, labels]; empty when the model has no head
    std::vector<Matrix> layer_inputs;   // [L] x [T, E] entering each layer (RunOptions::keep_layer_inputs), else empty
};

// A tensor owned by value, for exports.
struct OwnedTensor {
    std::string name;
    Shape shape;
    std::vector<float> values;
};

class Model {
public:
    virtual ~Model() = default;
    virtual const ModelInfo& info() const = 0;

    // Each throws headscope::Error when the model takes no such input, or it is bad
    // (empty, too long, invalid UTF-8, ids out of range, ...).
    virtual ModelInput encode_text(std::string_view text) const;
    ModelInput encode_image(const RgbImage& image) const { return encode_image(image, ImageOptions{}); }
    virtual ModelInput encode_image(const RgbImage& image, const ImageOptions& options) const;
    virtual ModelInput encode_ids(std::span<const std::int64_t> ids) const;

    virtual ModelTrace forward(const ModelInput& input, const RunOptions& options) const = 0;

    // What column `index` of the logits means, as a person reads it: a token's text
    // (language-model heads) or a class name (classifiers); the number itself where
    // the model knows no name.
    virtual std::string output_label(Eigen::Index index) const;

    // Every weight, named as tools/demo_reference.py reads them.
    virtual std::vector<OwnedTensor> export_weights() const = 0;
};

// Throws, before anything is allocated, when keeping every head's map for `T` positions
// (L x H x T x T floats) would take more than 3/4 of this machine's memory: one clear
// line instead of an out-of-memory kill halfway through a forward.
void check_maps_fit_in_memory(const ModelInfo& info, Eigen::Index T);

// The [T, T] mask a run uses: the causal mask (RunOptions::causal, else the model's own
// default) ANDed with RunOptions::keep; absent when neither applies.
OptionalMask run_mask(const ModelInfo& info, const RunOptions& options, Eigen::Index T);

// The start of every model's layer loop (after trace.mask is set): checks RunOptions'
// resume request against the model, input and mask (throws headscope::Error when it does not fit), copies the layers
// before RunOptions::resume_layer (and their inputs) from the trace it resumes, sets `x`
// to what the first computed layer consumes, and returns that layer's index (0 when not
// resuming; `x` is then left as it is).
Eigen::Index resume_layers(const ModelInfo& info, const RunOptions& options, ModelTrace& trace, Matrix& x);
// Called as each computed layer begins: keeps `x` when RunOptions::keep_layer_inputs asks.
void note_layer_input(const RunOptions& options, ModelTrace& trace, const Matrix& x);
// Sets what differs per layer in `attention` (its disabled heads and its detail) to layer l's.
void set_layer_options(const RunOptions& options, std::size_t l, AttentionOptions& attention);
// Whether a kept layer holds every stage (TraceDetail::all_stages) or the maps only.
TraceDetail detail_of(const AttentionTrace& layer);

// Checks `disabled` against the model's shape ([L][H] or empty); throws otherwise.
void check_disabled_heads(const ModelInfo& info, const std::vector<std::vector<bool>>& disabled);

}   // namespace headscope
