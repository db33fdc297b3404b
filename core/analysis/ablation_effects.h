#pragma once
// What disabling heads does to the model's output, and a scan of every head's
// importance (Michel et al. 2019, "Are sixteen heads really better than one?"): ablate
// each head alone, one after another, and measure how far the output moves.
//
// The measure depends on what the model outputs:
//  - models with a head (GPT-2's and BERT's language-model heads, classifiers): the
//    Kullback-Leibler divergence KL(intact || ablated) of the softmax of the logits, in
//    nats, averaged over the logit rows (every position of a language model; the single
//    row of a classifier); for labels scored each by a sigmoid (SigLIP), each label's
//    yes-or-no KL, averaged over the labels;
//  - the demo models (no head): the relative change of the final hidden states,
//    ||ablated - intact||_F / ||intact||_F.

#include "core/base/load_control.h"
#include "core/models/model.h"
#include "core/tensor/matrix.h"

#include <string_view>

namespace headscope {

enum class EffectMeasure { kl_divergence, relative_change };
std::string_view effect_measure_name(EffectMeasure measure);   // "kl_divergence", "relative_change"

// Mean over rows of KL(softmax(p_logits) || softmax(q_logits)) in nats (`score` sigmoid:
// mean over entries of KL(Bernoulli(sigmoid(p)) || Bernoulli(sigmoid(q)))). Same shape;
// throws headscope::Error otherwise.
double mean_kl_divergence(const Matrix& p_logits, const Matrix& q_logits, LabelScore score = LabelScore::softmax);
// ||changed - reference||_F / ||reference||_F (0 when both are 0). Same shape.
double relative_change(const Matrix& reference, const Matrix& changed);

struct OutputChange {
    EffectMeasure measure = EffectMeasure::relative_change;
    double value = 0.0;
};
// The measure above between two traces of the same model and input (`score`: the model's
// ModelInfo::label_score).
OutputChange output_change(const ModelTrace& intact, const ModelTrace& ablated, LabelScore score = LabelScore::softmax);

struct ImportanceScan {
    EffectMeasure measure = EffectMeasure::relative_change;
    Matrix effect;   // [L, H]: the output change with that head alone disabled
};

// Runs `input` once with every head enabled (`options` otherwise: causal, mask) and once
// per head with that head alone disabled, each resuming at the head's layer from the
// intact run. Reports progress (0..1) through `control`, which may stop it
// (LoadCancelled).
ImportanceScan importance_scan(const Model& model, const ModelInput& input, const RunOptions& options,
                               const LoadControl& control = {});

}   // namespace headscope
