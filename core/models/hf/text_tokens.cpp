#include "core/models/hf/text_tokens.h"

#include "core/base/error.h"
#include "core/models/hf/tensors.h"
#include "core/text/tokenizer/tokenizer_folder.h"

#include <filesystem>

namespace headscope {

HfTextTokens::HfTextTokens(const std::string& folder) {
    if (auto found = tokenizer::read_folder_tokenizer(folder)) {
        tokenizer_.emplace(std::move(found->tokenizer));
        files_ = found->files;
    }
}

HfTextTokens HfTextTokens::siglip(const std::string& folder) {
    const std::filesystem::path dir(folder);
    std::error_code ec;
    const bool has_config = std::filesystem::exists(dir / "tokenizer_config.json", ec);
    HfTextTokens tokens;
    tokens.siglip_.emplace((dir / "spiece.model").string(), has_config ? (dir / "tokenizer_config.json").string() : "");
    tokens.files_ =
        has_config ? "spiece.model + tokenizer_config.json (SiglipTokenizer)" : "spiece.model (SiglipTokenizer)";
    return tokens;
}

const tokenizer::Tokenizer* HfTextTokens::pieces() const {
    if (tokenizer_) return &*tokenizer_;
    return siglip_ ? &siglip_->pieces() : nullptr;
}

ModelInput HfTextTokens::encode(std::string_view text, Eigen::Index max_tokens, Eigen::Index vocab_size,
                                const std::string& model, const std::string& limit_field) const {
    if (pieces() == nullptr) {
        throw Error(model + ": no tokenizer files (vocab.json + merges.txt, or tokenizer.json), so it takes "
                            "--tokens, not --text");
    }
    std::vector<tokenizer::EncodedToken> tokens;
    try {
        tokens = siglip_ ? siglip_->encode(text, "text")
                         : tokenizer_->encode(text, true, "text", static_cast<std::size_t>(max_tokens));
    } catch (const tokenizer::TooManyTokens& e) {
        hf_check_length(e.at_least, max_tokens, "text", model, limit_field, true);
    }
    if (tokens.empty()) throw Error("text: the sentence is empty");
    hf_check_length(tokens.size(), max_tokens, "text", model, limit_field);
    std::vector<std::int32_t> ids32;
    for (const tokenizer::EncodedToken& t : tokens) ids32.push_back(t.id);
    ModelInput input;
    input.labels = pieces()->labels(ids32);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        hf_check_text_token(input.labels[i], tokens[i].id, vocab_size, model, "tokenizer");
        input.ids.push_back(tokens[i].id);
        input.spans.emplace_back(tokens[i].begin, tokens[i].end);
    }
    return input;
}

std::vector<std::string> HfTextTokens::labels(std::span<const std::int64_t> ids) const {
    std::vector<std::string> labels;
    std::vector<std::int32_t> known;
    const auto flush = [&] {
        if (known.empty()) return;
        for (std::string& label : pieces()->labels(known)) labels.push_back(std::move(label));
        known.clear();
    };
    for (const std::int64_t id : ids) {
        const auto id32 = static_cast<std::int32_t>(id);
        if (pieces() != nullptr && id >= 0 && id <= INT32_MAX && pieces()->has_id(id32)) {
            known.push_back(id32);
        } else {
            flush();
            labels.push_back(std::to_string(id));
        }
    }
    flush();
    return labels;
}

std::string HfTextTokens::label(Eigen::Index index) const {
    const auto id = static_cast<std::int32_t>(index);
    const tokenizer::Tokenizer* known = pieces();
    return known != nullptr && known->has_id(id) ? known->labels(std::span(&id, 1)).front() : std::to_string(index);
}

}   // namespace headscope
