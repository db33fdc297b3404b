#pragma once
// The Model interface: what turns a sentence, an image or token ids into the
// sequence a stack of attention layers consumes, runs it, and reports every layer's
// attention. Built-in demo models and (later) Hugging Face checkpoints implement it.

#include "core/image/image.h"
#include "core/models/label_score.h"
#include "core/nn/mask.h"
#include "core/nn/run.h"
#include "core/tensor/matrix.h"
#include "core/tensor/owned_tensor.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace headscope {

struct ModelInfo {
    std::string name;            // as given to --model, e.g. "builtin:toy-text"
    std::string description;     // one line
    Eigen::Index n_layers = 0;   // L
    Eigen::Index n_heads = 0;    // H
    // Hkv: heads h and h' share keys and values when h / G == h' / G (G = H / Hkv); 0: H (none shared)
    Eigen::Index n_kv_heads = 0;
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
    // Scores its picture against labels given with it (ModelInput::prompts; CLIP, SigLIP): the
    // logits are [1, labels], `label_score` makes them probabilities, and the labels are the input's.
    bool zero_shot = false;
    LabelScore label_score = LabelScore::softmax;
    // Zero-shot models: the text tower's layers and heads (each label's maps).
    Eigen::Index label_layers = 0;
    Eigen::Index label_heads = 0;
    // The heads of an attention-pooling probe over the image tower's output (SigLIP's
    // head; ModelTrace::probe_maps); 0: none.
    Eigen::Index probe_heads = 0;
    // Encoder-decoder models (T5, BART): the input's `source` is read by an encoder of
    // `encoder_layers` layers (n_heads heads each), its target by the decoder, whose layers the
    // fields above describe (n_layers, causal). The maps: ModelTrace::layers (the decoder's
    // self-attention), encoder_layers, cross_layers.
    bool encoder_decoder = false;
    Eigen::Index encoder_layers = 0;
    std::int64_t decoder_start_id = 0;   // what the decoder reads first (decoder_start_token_id)
    std::int64_t end_id = -1;            // eos_token_id: where greedy generation stops; -1: none
    // A causal run given RunOptions::prefix_from takes those positions from it, computing the
    // rest (false: it computes every row, as the checkpoint encoders and length-dependent
    // rotary positions do).
    bool reuses_prefix = false;
    // The logits' columns: V for a language-model head, the labels of a classifier; 0: no head.
    Eigen::Index n_outputs = 0;
    int image_size = 0;   // square input side in pixels (image models)
    int patch_size = 0;   // P (image models)
    std::int64_t n_parameters = 0;
    // What each head was built to do ([L][H]; empty strings where nothing was built in).
    std::vector<std::vector<std::string>> head_roles;
    // [L] each layer's sliding window W (local layers), 0 for global ones; empty: no layer slides.
    std::vector<Eigen::Index> layer_windows;

    Eigen::Index kv_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
    // G: the query heads of one key/value group (1: no heads share keys and values).
    Eigen::Index group_size() const { return kv_heads() > 0 ? n_heads / kv_heads() : 1; }
    // The key/value group query head h belongs to: heads h and h' share keys and values
    // exactly when their groups are equal.
    Eigen::Index group_of(Eigen::Index h) const { return h / std::max<Eigen::Index>(group_size(), 1); }
    // Whether some layers slide and others do not (or all slide): layers are then local or global.
    bool has_local_layers() const {
        return std::any_of(layer_windows.begin(), layer_windows.end(), [](Eigen::Index w) { return w > 0; });
    }
    // Layer l's sliding window, or 0 for a global layer.
    Eigen::Index window_of(Eigen::Index l) const {
        return l >= 0 && l < static_cast<Eigen::Index>(layer_windows.size())
                   ? layer_windows[static_cast<std::size_t>(l)]
                   : 0;
    }
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
    // Of the prefix tokens, the registers (DINOv2 with registers: after [CLS], before the patches).
    int n_register_tokens = 0;
    RgbImage pixels;   // images: the picture as the model saw it (resized / cut), under the patch grid
    // Zero-shot models (ModelInfo::zero_shot): each label the picture is scored against, as
    // its text tower reads it (Model::encode_label), and as the person gave it.
    std::vector<ModelInput> prompts;
    std::vector<std::string> prompt_names;
    // Encoder-decoder models: the source the encoder reads (this input, the target, is the
    // decoder's); null for every other model.
    std::shared_ptr<const ModelInput> source;
    // Labels given but not scored, each with why (the window scores the others; see
    // session::RunInput::unreadable_labels_left_out).
    std::vector<std::string> prompts_left_out;
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
    bool operator==(const ImageOptions& other) const = default;
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
    // As encode_text and encode_ids, given `before`, an input this model encoded: where the
    // model embeds each position from its id and place alone (a decoder's table lookups),
    // the positions on which both inputs hold the same ids from the first on take
    // `before`'s embeddings, bit for bit what the lookups give, and only the rest are
    // looked up (a token typed at the end of 1,000 reads one row of a mapped table, not
    // 1,000 faulted in and handed back). Any other model encodes afresh.
    virtual ModelInput encode_text_after(std::string_view text, const ModelInput& before) const;
    virtual ModelInput encode_ids_after(std::span<const std::int64_t> ids, const ModelInput& before) const;
    // Zero-shot models: a label as the text tower reads it, from its text or its token ids, for
    // ModelInput::prompts. Every other model throws.
    virtual ModelInput encode_label(std::string_view text) const;
    virtual ModelInput encode_label_ids(std::span<const std::int64_t> ids) const;
    // Encoder-decoder models (ModelInfo::encoder_decoder): encode_text and encode_ids read the
    // source, and the decoder reads its start token alone; these give the decoder `ids` as
    // given (the start token first, as decoder_input_ids) or `text`'s ids shifted right as
    // transformers shifts labels (the start token, then every id but the last), over
    // `input`'s source. Every other model throws.
    virtual ModelInput encode_target_ids(const ModelInput& input, std::span<const std::int64_t> ids) const;
    virtual ModelInput encode_target_text(const ModelInput& input, std::string_view text) const;
    // A model of two towers (CLIP): its text tower, a text model in its own right (the
    // labels' encoder); null for every other model. Owned by this model.
    virtual const Model* text_tower() const { return nullptr; }

    virtual ModelTrace forward(const ModelInput& input, const RunOptions& options) const = 0;
    // Head `head`'s map at `layer` of `trace` (a run of this model): the kept one, or where
    // the run streamed its maps (RunOptions::on_map), computed again from what it kept,
    // bit for bit. Throws headscope::Error when the trace holds neither.
    virtual Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const;
    // Every stage of `layer` of `trace` (a run of this model that kept its layer inputs,
    // RunOptions::keep_layer_inputs, with these disabled heads), computed again for that
    // layer alone: what a run with stages_layer = `layer` holds there. `only_head` >= 0:
    // that head's stages alone, the other heads left empty (a T x T's work and memory, not
    // H of them); -1: every head. Throws headscope::Error when the trace kept no inputs,
    // the head or layer is not the model's, or the model cannot.
    virtual AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                        Eigen::Index only_head) const;
    // Positions [first, first + n)'s logits [n, V] of `trace` (a run of this model): the
    // kept rows, or where the run kept its last rows only (RunOptions::last_logit_rows),
    // computed from its final hidden state, the same numbers a run keeping every row
    // holds. Throws headscope::Error when the trace holds neither.
    virtual Matrix logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const;

    // What column `index` of the logits means, as a person reads it: a token's text
    // (language-model heads) or a class name (classifiers); the number itself where
    // the model knows no name.
    virtual std::string output_label(Eigen::Index index) const;

    // Every weight, named as tools/demo_reference.py reads them.
    virtual std::vector<OwnedTensor> export_weights() const = 0;
};

// Throws, before anything is allocated, when a forward keeping every head's map for `T`
// positions (L x H x T x T floats, `map_copies` times: dump holds them again to write
// them) and its working memory would not fit in the memory left (core/base/memory_room.h:
// RAM, ulimit -v, the cgroup): one clear line instead of an out-of-memory kill halfway.
void check_maps_fit_in_memory(const ModelInfo& info, Eigen::Index T, int map_copies = 1);
// The same for a run that streams its maps (RunOptions::on_map) on `threads` threads: each
// layer's queries and keys kept, a map per thread, the logits (`logit_rows` of them, as
// RunOptions::last_logit_rows; -1: every position's).
void check_streamed_run_fits(const ModelInfo& info, Eigen::Index T, int threads, Eigen::Index logit_rows = -1);

}   // namespace headscope
