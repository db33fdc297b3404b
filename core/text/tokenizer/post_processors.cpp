#include "core/text/tokenizer/post_processors.h"

#include "core/base/error.h"
#include "core/base/json_file.h"

namespace headscope::tokenizer {

namespace {

class TemplateProcessor : public PostProcessor {
public:
    explicit TemplateProcessor(std::vector<TemplatePart> parts) : parts_(std::move(parts)) {}
    void process(std::vector<EncodedToken>& tokens, std::size_t text_bytes) const override {
        std::vector<EncodedToken> out;
        out.reserve(tokens.size() + parts_.size());
        bool after_text = false;
        for (const TemplatePart& part : parts_) {
            if (part.is_sequence) {
                out.insert(out.end(), tokens.begin(), tokens.end());
                after_text = true;
                continue;
            }
            const std::size_t at = after_text ? text_bytes : 0;
            for (const std::int32_t id : part.ids) out.push_back({id, at, at, true});
        }
        tokens = std::move(out);
    }
    void check_ids(const std::function<bool(std::int32_t)>& known) const override {
        for (const TemplatePart& part : parts_) {
            for (const std::int32_t id : part.ids) {
                if (!known(id)) throw Error(part.source + ": id " + std::to_string(id) + " is not in the vocabulary");
            }
        }
    }

private:
    std::vector<TemplatePart> parts_;
};

class SequenceProcessor : public PostProcessor {
public:
    explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}
    void process(std::vector<EncodedToken>& tokens, std::size_t text_bytes) const override {
        for (const auto& step : steps_) step->process(tokens, text_bytes);
    }
    void check_ids(const std::function<bool(std::int32_t)>& known) const override {
        for (const auto& step : steps_) step->check_ids(known);
    }

private:
    std::vector<std::unique_ptr<PostProcessor>> steps_;
};

// ByteLevel as a post-processor only trims whitespace from offsets; ids are untouched.
class OffsetsOnlyProcessor : public PostProcessor {
public:
    void process(std::vector<EncodedToken>&, std::size_t) const override {}
    void check_ids(const std::function<bool(std::int32_t)>&) const override {}
};

std::int32_t read_id(const JsonField& field) { return static_cast<std::int32_t>(field.integer(0, 16'000'000)); }

std::string source_of(const JsonField& field) { return field.file() + ": " + field.path(); }

// BertProcessing and RobertaProcessing write "cls": ["[CLS]", 101].
TemplatePart read_pair_part(const JsonField& field) {
    if (!field.value().is_array() || field.size() != 2) field.expected("[\"token\", id]");
    return {false, {read_id(field.at(std::size_t{1}))}, source_of(field)};
}

std::unique_ptr<PostProcessor> read_template(const JsonField& field) {
    const JsonField single = field.at("single");
    const std::optional<JsonField> specials = field.find("special_tokens");
    std::vector<TemplatePart> parts;
    for (std::size_t i = 0; i < single.size(); ++i) {
        const JsonField entry = single.at(i);
        if (const auto sequence = entry.find("Sequence")) {
            const std::string name = sequence->at("id").string();
            if (name != "A") sequence->at("id").expected("\"A\" (the text; \"B\" is a pair's second text)");
            parts.push_back({true, {}, {}});
        } else if (const auto special = entry.find("SpecialToken")) {
            const JsonField name = special->at("id");
            const auto known = specials ? specials->find(name.string()) : std::nullopt;
            if (!known) {
                std::string what = name.string();
                what.insert(what.begin(), '"');
                name.fail(what + "\" is not in " + json_child_path(field.path(), "special_tokens"));
            }
            const JsonField ids = known->at("ids");
            TemplatePart part{false, {}, source_of(ids)};
            for (std::size_t k = 0; k < ids.size(); ++k) part.ids.push_back(read_id(ids.at(k)));
            parts.push_back(std::move(part));
        } else {
            entry.expected("{\"Sequence\": ...} or {\"SpecialToken\": ...}");
        }
    }
    return make_template_processor(std::move(parts));
}

}   // namespace

std::unique_ptr<PostProcessor> make_template_processor(std::vector<TemplatePart> parts) {
    return std::make_unique<TemplateProcessor>(std::move(parts));
}

std::unique_ptr<PostProcessor> read_post_processor(const JsonField& field) {
    const std::string type = field.type();
    if (type == "TemplateProcessing") return read_template(field);
    if (type == "BertProcessing" || type == "RobertaProcessing") {
        return make_template_processor(
            {read_pair_part(field.at("cls")), {true, {}, {}}, read_pair_part(field.at("sep"))});
    }
    if (type == "ByteLevel") return std::make_unique<OffsetsOnlyProcessor>();
    if (type == "Sequence")
        return std::make_unique<SequenceProcessor>(read_each(field, "processors", read_post_processor));
    field.at("type").fail("\"" + type +
                          "\" is not a post-processor this reader knows (TemplateProcessing, "
                          "BertProcessing, RobertaProcessing, ByteLevel, Sequence)");
}

}   // namespace headscope::tokenizer
