#include "core/nn/run_blocks.h"

#include "core/base/error.h"
#include "core/nn/mask.h"
#include "core/nn/prefix_reuse.h"

#include <algorithm>
#include <string>

namespace headscope {

TraceDetail detail_of(const AttentionTrace& layer) {
    return !layer.heads.empty() && layer.heads[0].scores.size() != 0 ? TraceDetail::all_stages : TraceDetail::weights;
}

double trace_bytes(const ModelTrace& trace, const ModelTrace* counted) {
    double values = 0;
    const auto add = [&](const Matrix& m) { values += static_cast<double>(m.size()); };
    const auto add_layers = [&](const LayerTraces& layers, const LayerTraces* counted_layers) {
        for (std::size_t l = 0; l < layers.size(); ++l) {
            if (counted_layers != nullptr && layers.shares(l, *counted_layers)) continue;
            const AttentionTrace& layer = layers[l];
            for (const HeadTrace& head : layer.heads) {
                for (const Matrix* m : {&head.weights, &head.q, &head.k, &head.q_unrotated, &head.k_unrotated, &head.v,
                                        &head.scores, &head.masked, &head.context}) {
                    add(*m);
                }
            }
            for (const Matrix* m :
                 {&layer.input, &layer.concat, &layer.output, &layer.queries, &layer.keys, &layer.values})
                add(*m);
        }
    };
    add_layers(trace.layers, counted != nullptr ? &counted->layers : nullptr);
    add_layers(trace.encoder_layers, nullptr);
    add_layers(trace.cross_layers, nullptr);
    add(trace.hidden);
    add(trace.probe_maps);
    // What `counted` holds already (the very matrix, shared) is not counted again.
    const auto held_by_counted = [&](const SharedMatrix& m) {
        if (counted == nullptr) return false;
        return m.shares(counted->logits) ||
               std::ranges::any_of(counted->layer_inputs, [&](const SharedMatrix& o) { return m.shares(o); });
    };
    if (!held_by_counted(trace.logits)) add(trace.logits);
    for (const SharedMatrix& m : trace.layer_inputs) {
        if (!held_by_counted(m)) add(m);
    }
    const double mask = (trace.mask ? static_cast<double>(trace.mask->size()) : 0.0) +
                        (trace.encoder_mask ? static_cast<double>(trace.encoder_mask->size()) : 0.0);
    double prompts = 0;
    for (const ModelTrace& prompt : trace.prompt_traces) prompts += trace_bytes(prompt);
    return values * sizeof(float) + mask + prompts;
}

bool streamed(const AttentionTrace& layer) { return layer.queries.size() != 0; }

Stack layer_norm_stack(BlockSpec spec, Eigen::Index n_layers, Eigen::Index n_heads, float eps, Activation activation) {
    Block block;
    block.attention_norm.eps = eps;
    block.mlp_norm.eps = eps;
    block.attention.n_heads = n_heads;
    block.mlp.activation = activation;
    Stack stack;
    stack.spec = spec;
    stack.blocks.assign(static_cast<std::size_t>(n_layers), block);
    return stack;
}

template <class Kept>
Matrix StackRun::joined(Kept ModelTrace::*member, Matrix computed) const {
    if (first_row == 0) return computed;
    const Matrix& kept_rows = kept->*member;
    return stack_rows(kept_rows, first_row, computed);
}
template Matrix StackRun::joined(Matrix ModelTrace::*, Matrix) const;
template Matrix StackRun::joined(SharedMatrix ModelTrace::*, Matrix) const;

bool stack_reuses_prefix(const Stack& stack) {
    for (const Block& block : stack.blocks) {
        if (block.attention.rotary.active() && block.attention.rotary.depends_on_length()) return false;
    }
    return true;
}

namespace {

// What differs per layer: its disabled heads, its detail, its window (narrowing the run's mask).
AttentionOptions layer_options(const RunOptions& options, const Block& block, Eigen::Index l,
                               const OptionalMask& mask) {
    AttentionOptions attention;
    attention.disabled_heads = options.disabled_heads.layer_flags(l);
    attention.detail = options.detail_at(l);
    attention.keep_keys_values = options.keep_layer_inputs;
    attention.keep = mask;
    attention.window = block.window;
    if (options.on_map) {
        attention.on_map = [&sink = options.on_map, l](Eigen::Index head, const Matrix& weights) {
            sink(l, head, weights);
        };
    }
    return attention;
}

// A layer's cross-attention: its disabled heads and the run's detail; every source position seen.
AttentionOptions cross_layer_options(const RunOptions& options, const CrossAttentionRun& cross, Eigen::Index l) {
    AttentionOptions attention;
    attention.disabled_heads = cross.disabled_heads.layer_flags(l);
    attention.detail = options.detail_at(l);
    return attention;
}

// RunOptions::resume_from: checks the request against the run, shares the layers before
// resume_layer with it and copies their inputs into `run`, sets `x` to what the first computed layer
// consumes and returns its index; 0 when not resuming.
Eigen::Index resume(const std::string& model, const Stack& stack, const RunOptions& options, StackRun& run, Matrix& x) {
    const ModelTrace* from = options.resume_from;
    if (from == nullptr) return 0;
    const Eigen::Index L = stack.n_layers();
    const Eigen::Index l = options.resume_layer;
    if (l < 0 || l >= L) {
        throw Error(model + ": cannot resume at layer " + std::to_string(l) + ", the model has layers 0.." +
                    std::to_string(L - 1));
    }
    if (static_cast<Eigen::Index>(from->layer_inputs.size()) != L ||
        static_cast<Eigen::Index>(from->layers.size()) != L || from->layer_inputs[l].rows() != x.rows() ||
        from->layer_inputs[l].cols() != x.cols()) {
        throw Error(model + ": the run to resume from did not keep every layer's input for this input");
    }
    const OptionalMask& mask = run.trace.mask;
    const bool same_mask = from->mask.has_value() == mask.has_value() &&
                           (!mask || (from->mask->rows() == mask->rows() && from->mask->cols() == mask->cols() &&
                                      masks_agree(*from->mask, *mask, mask->rows(), mask->cols())));
    if (!same_mask) throw Error(model + ": the run to resume from had another attention mask");
    for (Eigen::Index copied = 0; copied < l; ++copied) {
        const AttentionTrace& layer = from->layers[static_cast<std::size_t>(copied)];
        if (detail_of(layer) != options.detail_at(copied)) {
            throw Error(model + ": the run to resume from kept another detail at layer " + std::to_string(copied));
        }
        if (streamed(layer) != (options.on_map && copied != options.stages_layer)) {
            throw Error(model + ": the run to resume from " + (streamed(layer) ? "streamed" : "kept") +
                        " the maps of layer " + std::to_string(copied) + ", this run " +
                        (options.on_map ? "streams them" : "keeps them"));
        }
    }
    run.trace.layers.share_first(from->layers, static_cast<std::size_t>(l));
    if (options.keep_layer_inputs)
        run.trace.layer_inputs.assign(from->layer_inputs.begin(), from->layer_inputs.begin() + l);
    x = from->layer_inputs[l];
    return l;
}

// RunOptions::prefix_from, where it applies: the p rows of every layer that come from the
// kept run, only the later positions computed, their queries against every key. A whole
// run reuses none: 0.
Eigen::Index reused_prefix_rows(const std::string& model, const Stack& stack, const RunOptions& options,
                                const OptionalMask& mask, Eigen::Index T) {
    if (options.prefix_from == nullptr || !stack_reuses_prefix(stack)) return 0;
    check_prefix_reuse(model, stack.n_layers(), options, mask, T);
    return options.prefix_rows;
}

// x must be [1..max_tokens, E] for the blocks' width E.
void check_input(const std::string& model, const Stack& stack, const Matrix& x) {
    const Eigen::Index E = stack.blocks.empty() ? x.cols() : stack.blocks.front().attention_norm.weight.size();
    const bool too_long = stack.max_tokens > 0 && x.rows() > stack.max_tokens;
    if (x.rows() >= 1 && !too_long && (E == 0 || x.cols() == E)) return;
    throw Error(model + ": input embeddings are [" + std::to_string(x.rows()) + ", " + std::to_string(x.cols()) +
                "], expected [1.." + (stack.max_tokens > 0 ? std::to_string(stack.max_tokens) : std::string()) + ", " +
                std::to_string(E) + "]");
}

// The family's mask, or the one the run asks for, ANDed with the run's custom pairs.
OptionalMask run_mask(const BlockSpec& spec, const RunOptions& options, Eigen::Index T) {
    OptionalMask causal;
    if (options.causal.value_or(spec.causal)) causal = mask_causal(T, T);
    return mask_and(causal, options.keep);
}

}   // namespace

StackRun run_blocks(const std::string& model, const Stack& stack, Matrix x, const RunOptions& options,
                    Eigen::Index last_mlp_rows, const CrossAttentionRun* cross) {
    const Eigen::Index L = stack.n_layers();
    options.disabled_heads.check_fits(L, stack.n_heads());
    if (cross != nullptr) {
        if (options.resume_from != nullptr || options.prefix_from != nullptr)
            throw Error(model +
                        ": a decoder reading an encoder computes every layer and row (no resume, no kept prefix)");
        if (L > 0) cross->disabled_heads.check_fits(L, stack.blocks.front().cross_attention.n_heads);
    }
    check_input(model, stack, x);
    if (options.on_map && options.prefix_from != nullptr) {
        throw Error(model + ": a run that streams its maps computes every row (no kept prefix)");
    }
    const OptionalMask mask = run_mask(stack.spec, options, x.rows());
    StackRun run;
    run.trace.mask = mask;
    run.trace.layers.reserve(static_cast<std::size_t>(L));
    // The positions computed: all of them, or those after a kept prefix (whose rows of
    // every layer are then joined from the kept run). One loop either way.
    const Eigen::Index p = reused_prefix_rows(model, stack, options, mask, x.rows());
    if (p > 0) x = Matrix(x.bottomRows(x.rows() - p));
    for (Eigen::Index l = p > 0 ? 0 : resume(model, stack, options, run, x); l < L; ++l) {
        const Block& block = stack.blocks[static_cast<std::size_t>(l)];
        const auto at = static_cast<std::size_t>(l);
        if (options.keep_layer_inputs)
            run.trace.layer_inputs.push_back(p > 0 ? stack_rows(options.prefix_from->layer_inputs[at], p, x) : x);
        AttentionOptions attention = layer_options(options, block, l, mask);
        AttentionTrace computed;
        if (p > 0) {
            const AttentionTrace& kept_layer = options.prefix_from->layers[at];
            attention.keep = mask_rows_from(mask, p);   // the new queries' rows (at positions p..)
            computed =
                join_prefix(block.attention, kept_layer,
                            block_forward(stack.spec, block, x, attention, -1, {&kept_layer, p}), p, mask, attention);
        } else if (cross != nullptr) {
            CrossAttentionStep step{cross->memory, cross_layer_options(options, *cross, l), {}};
            computed = block_forward(stack.spec, block, x, attention, l + 1 == L ? last_mlp_rows : -1, {}, &step);
            run.trace.cross_layers.push_back(std::move(step.trace));
        } else {
            const Eigen::Index mlp_rows = l + 1 == L ? last_mlp_rows : -1;
            computed = block_forward(stack.spec, block, x, attention, mlp_rows);
        }
        if (options.on_map && options.detail_at(l) != TraceDetail::all_stages) {
            // A streamed run keeps what computes its maps again: the heads' joined
            // contexts and the output projection ([T, D] and [T, E] a layer, a gigabyte
            // over Llama-3.2-1B at T = 4,096) have gone into the stream and are let go.
            computed.concat.resize(0, 0);
            computed.output.resize(0, 0);
        }
        run.trace.layers.push_back(std::move(computed));
        if (options.on_layer) options.on_layer(l + 1, L);
    }
    run.x = std::move(x);
    run.first_row = p;
    run.trace.reused_rows = p;
    run.kept = p > 0 ? options.prefix_from : nullptr;
    return run;
}

Matrix stack_head_map(const Stack& stack, const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) {
    if (layer < 0 || layer >= stack.n_layers() || layer >= static_cast<Eigen::Index>(trace.layers.size())) {
        throw Error("layer " + std::to_string(layer) + ": the run has layers 0.." +
                    std::to_string(static_cast<Eigen::Index>(trace.layers.size()) - 1));
    }
    const auto l = static_cast<std::size_t>(layer);
    return head_map(stack.blocks[l].attention, trace.layers[l], head, trace.mask);
}

AttentionTrace stack_layer_stages(const Stack& stack, const ModelTrace& trace, Eigen::Index layer,
                                  const HeadMask& disabled_heads, Eigen::Index only_head) {
    const Eigen::Index L = stack.n_layers();
    if (layer < 0 || layer >= L) {
        throw Error("layer " + std::to_string(layer) + ": the model has layers 0.." + std::to_string(L - 1));
    }
    if (static_cast<Eigen::Index>(trace.layer_inputs.size()) != L) {
        throw Error("layer " + std::to_string(layer) +
                    ": the run kept no layer inputs, so its stages cannot be computed again");
    }
    RunOptions options;
    options.disabled_heads = disabled_heads;
    options.stages_layer = layer;
    const auto l = static_cast<std::size_t>(layer);
    const Block& block = stack.blocks[l];
    Matrix x = trace.layer_inputs[l];
    AttentionOptions attention = layer_options(options, block, layer, trace.mask);
    attention.stages_head = only_head;
    return block_forward(stack.spec, block, x, attention, 0);
}

}   // namespace headscope
