#pragma once
// The file of a whole run, as `headscope-cli dump` writes it and File > Export writes
// the shown run: attn.L [heads, T, T] per layer, input_ids I64 [T] for text, logits
// ([T, V] for a language-model head, [labels] for a classifier), and metadata (tokens as
// a JSON array of labels, model, settings, causal on/off). A zero-shot model's (CLIP) holds
// its image tower's maps as vision.attn.L, each label's text-tower maps and ids as
// text.I.attn.L [H, T_I, T_I] and text.I.input_ids, and logits_per_image [labels]; SigLIP's
// also its pooling probe's maps, vision.pool.attn [H, 1, T]. An encoder-decoder model's (T5,
// BART) names its decoder's self-attention decoder.attn.L [heads, Tt, Tt] and holds every
// head of its encoder's, encoder.attn.L [H, Ts, Ts], and of its cross-attention,
// cross.attn.L [H, Tt, Ts]; input_ids are the source's, decoder_input_ids the target's. One
// description, so a file from the window and one from the CLI read the same (docs/cli.md, dump).

#include "core/base/load_control.h"
#include "core/models/model.h"
#include "core/tensor/safetensors.h"
#include "session/snapshot.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace headscope::session {

// Rows of a language model's [T, V] logits computed and written at a time, where a run
// kept fewer than all of them (a 128k vocabulary at T = 4,096 is 2 GB).
inline constexpr Eigen::Index logit_piece_rows = 128;

// The name of layer `layer`'s maps: attn.L, or a zero-shot model's image tower's vision.attn.L,
// or an encoder-decoder model's decoder's decoder.attn.L.
std::string run_file_map_key(const ModelInfo& info, Eigen::Index layer);

// The tensors: attn.L [heads, T, T] for each of `layers`, input_ids for text, logits
// when `with_logits` and the model has a head (or scores labels given with `input`), and
// each label's maps and ids.
std::vector<SafetensorsWriter::Entry> run_file_entries(const ModelInfo& info, const ModelInput& input,
                                                       const std::vector<Eigen::Index>& layers, std::size_t heads,
                                                       bool with_logits);
std::map<std::string, std::string> run_file_metadata(const ModelInfo& info, const ModelInput& input, bool causal);

// `run`'s logits into `file`: its own, or (`in_pieces`, a run that kept fewer rows than
// it has positions) computed from its final hidden state logit_piece_rows at a time,
// each written where it goes.
void write_run_logits(SafetensorsWriter& file, const Snapshot& run, bool in_pieces);

// A zero-shot run's own tensors: SigLIP's probe maps, each label's text-tower maps and ids
// (none for other models).
void write_run_zero_shot(SafetensorsWriter& file, const Snapshot& run);

// The input's ids: input_ids (an encoder-decoder model's source's) and decoder_input_ids.
void write_run_input_ids(SafetensorsWriter& file, const ModelInput& input);

// An encoder-decoder run's encoder and cross-attention maps (none for other models).
void write_run_encoder_decoder(SafetensorsWriter& file, const Snapshot& run);

// Whether the file holds logits: a head's, or the scores of labels given with the input.
bool run_file_has_logits(const ModelInfo& info, const ModelInput& input);

// Every head of every layer of `shown` (its maps computed where the run streamed them,
// the same numbers), with its input ids and logits, to `path` atomically; `control`
// reports the share of heads written and may stop it (LoadCancelled: nothing is left
// behind). Returns the file's size in bytes.
std::uint64_t write_run_file(const Snapshot& shown, const std::string& path, const LoadControl& control = {});

}   // namespace headscope::session
