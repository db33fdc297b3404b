#include "core/text/tokenizer/sentencepiece_model.h"

#include "core/base/error.h"

#include <sentencepiece_processor.h>

namespace headscope::tokenizer {

namespace {

// protobuf: ModelProto field 3 (normalizer_spec) holding NormalizerSpec field 3 (add_dummy_prefix)
// false. A parser merges a repeated message field into the one before, so these bytes after
// a model are what transformers does with NormalizerSpec(add_dummy_prefix=False).MergeFrom.
constexpr std::string_view no_dummy_prefix{"\x1a\x02\x18\x00", 4};

}   // namespace

SentencePieceModel::SentencePieceModel(std::string_view model_bytes, const std::string& file,
                                       SentencePieceOptions options)
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()), file_(file) {
    std::string bytes(model_bytes);
    if (!options.add_dummy_prefix) bytes += no_dummy_prefix;
    if (model_bytes.starts_with("version https://git-lfs")) {
        throw Error(file + ": a Git LFS pointer, not the model it names (git lfs pull fetches it)");
    }
    // The library's own message names its source line, not the file: the reason is ours.
    if (!processor_->LoadFromSerializedProto(bytes).ok()) {
        throw Error(file + ": not a SentencePiece model (no ModelProto that libsentencepiece accepts)");
    }
    const int n = processor_->GetPieceSize();
    for (int id = 0; id < n; ++id) {
        std::string piece = processor_->IdToPiece(id);
        if (!vocabulary_.add(std::move(piece), id)) {
            throw Error(file + ": piece " + std::to_string(id) + " (\"" + processor_->IdToPiece(id) +
                        "\") is already in the model under another id");
        }
    }
}

SentencePieceModel::~SentencePieceModel() = default;

void SentencePieceModel::tokenize(std::string_view piece, std::vector<ModelToken>& out) const {
    const sentencepiece::ImmutableSentencePieceText encoded = processor_->EncodeAsImmutableProto(piece);
    for (const auto& p : encoded.pieces()) {
        out.push_back({static_cast<std::int32_t>(p.id()), p.begin(), p.end()});
    }
}

std::int32_t SentencePieceModel::unk_id() const { return processor_->unk_id(); }

bool SentencePieceModel::is_byte(std::int32_t id) const { return processor_->IsByte(id); }

}   // namespace headscope::tokenizer
