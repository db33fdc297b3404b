#pragma once
// A pre-LN transformer encoder stack, the blocks every demo model shares:
//   x = x + Attention(LN1(x));  x = x + MLP(LN2(x));  ... ; out = LN_final(x)

#include "core/layers.h"
#include "core/model.h"

#include <vector>

namespace headscope {

struct EncoderBlock {
    LayerNorm ln1;           // layers.{l}.ln1.weight / .bias
    AttentionWeights attn;   // layers.{l}.attn.{q,k,v,out}_proj.weight / .bias
    LayerNorm ln2;           // layers.{l}.ln2.weight / .bias
    Mlp mlp;                 // layers.{l}.mlp.fc1 / fc2 .weight / .bias
};

struct EncoderStack {
    std::vector<EncoderBlock> blocks;   // [L]
    LayerNorm final_norm;               // ln_final.weight / .bias
};

// Runs x [T, E] through every block with `mask` ([T, T] or absent) and the options'
// ablations (and resume request: `info` names the model in its errors); the trace holds
// every layer's attention and the final hidden state.
ModelTrace encoder_forward(const ModelInfo& info, const EncoderStack& stack, Matrix x, const OptionalMask& mask,
                           const RunOptions& options);

// Appends the stack's tensors under the names above.
void export_encoder(const EncoderStack& stack, std::vector<OwnedTensor>& out);

// Parameters in the stack (weights and biases).
std::int64_t encoder_parameter_count(const EncoderStack& stack);

// Helpers for exports: a matrix or vector as an owned tensor.
OwnedTensor owned_tensor(std::string name, const Matrix& m);
OwnedTensor owned_tensor(std::string name, const Vector& v);

}   // namespace headscope
