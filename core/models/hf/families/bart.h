#pragma once
// The bart family as data over the one encoder-decoder (core/models/hf/seq2seq.h).

#include "core/models/hf/seq2seq.h"

namespace headscope {

const Seq2SeqFamily& bart_family();

}   // namespace headscope
