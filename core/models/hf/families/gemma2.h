#pragma once
// The gemma2 family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& gemma2_family();

// Gemma 2 and 3's scores and sublayers, into c: norms after each sublayer, the scale
// query_pre_attn_scalar^-1/2, and the soft caps attn_logit_softcapping (when `score_cap`
// > 0, its default; Gemma 3 carries the field but no longer applies it) and
// final_logit_softcapping (default `logit_cap`; null: none).
void read_gemma_scores(const HfFields& f, DecoderConfig& c, double score_cap, double logit_cap);

}   // namespace headscope
