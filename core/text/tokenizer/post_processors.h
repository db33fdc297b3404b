#pragma once
// The post-processors of tokenizer.json ("post_processor": {...}): what adds the special
// tokens a model expects around the text when special tokens are asked for
// (TemplateProcessing: Llama 3's <|begin_of_text|>; BertProcessing: [CLS] ... [SEP];
// RobertaProcessing: <s> ... </s>; ByteLevel, which only trims offsets; Sequence).

#include "core/text/tokenizer/json_field.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace headscope::tokenizer {

struct EncodedToken {
    std::int32_t id = 0;
    std::size_t begin = 0;   // bytes [begin, end) of the input; empty for tokens the post-processor adds
    std::size_t end = 0;
    bool special = false;   // a special added token, or added by the post-processor
};

// One entry of a template: a special token's ids, or the text's tokens (is_sequence).
struct TemplatePart {
    bool is_sequence = false;
    std::vector<std::int32_t> ids;
    std::string source;   // where the ids were read ("tokenizer.json: post_processor.cls"), for messages
};

class PostProcessor {
public:
    virtual ~PostProcessor() = default;
    // Adds the special tokens around one text's tokens; `text_bytes` places the ones after it.
    virtual void process(std::vector<EncodedToken>& tokens, std::size_t text_bytes) const = 0;
    // Refuses, naming where it was read, an id that `known` says no token has: a file may
    // name any number, and an id without a token has no embedding row and no label.
    virtual void check_ids(const std::function<bool(std::int32_t)>& known) const = 0;
};

std::unique_ptr<PostProcessor> read_post_processor(const JsonField& field);
// A template of special tokens and the text, as TemplateProcessing's "single".
std::unique_ptr<PostProcessor> make_template_processor(std::vector<TemplatePart> parts);

}   // namespace headscope::tokenizer
