#include "session/run_input.h"

#include "core/base/error.h"
#include "core/base/index_lists.h"
#include "core/base/shown.h"
#include "core/image/image.h"
#include "core/models/generate.h"

#include <algorithm>
#include <optional>

namespace headscope::session {

std::vector<std::int64_t> token_ids_typed(const std::string& text, const std::string& what) {
    // Each item trimmed, so that an error quotes what was typed ("The cat", not "Thecat").
    std::string list;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::size_t first = text.find_first_not_of(" \t\r\n", start);
        const std::size_t last = text.find_last_not_of(" \t\r\n", comma == 0 ? 0 : comma - 1);
        if (first < comma && last != std::string::npos && last >= first) list += text.substr(first, last - first + 1);
        if (comma == text.size()) break;
        list += ',';
        start = comma + 1;
    }
    return parse_index_list(what, list, "464,3797,3332");
}

namespace {

// The labels a zero-shot model scores the picture against, each through its text tower.
void encode_labels(const Model& model, const RunInput& input, ModelInput& encoded) {
    std::optional<Error> first_refusal;
    for (std::size_t i = 0; i < input.labels.size(); ++i) {
        const std::string& label = input.labels[i];
        // The label quoted short: a refused 300-token label is not repeated whole.
        const std::string what =
            input.labels_name + ": label " + std::to_string(i + 1) + " (\"" + shown(label, 40) + "\")";
        try {
            encoded.prompts.push_back(input.label_ids ? model.encode_label_ids(token_ids_typed(label))
                                                      : model.encode_label(label));
        } catch (const Error& e) {
            if (!input.unreadable_labels_left_out) throw Error(what + ": " + e.what());
            encoded.prompts_left_out.push_back("label " + std::to_string(i + 1) + " (\"" + shown(label, 40) +
                                               "\"): " + e.what());
            if (!first_refusal) first_refusal.emplace(what + ": " + e.what());
            continue;
        }
        encoded.prompt_names.push_back(label);
    }
    if (first_refusal && encoded.prompts.empty()) throw *first_refusal;
}

ModelInput encode_input(const Model& model, const RunInput& input, const ModelInput& before) {
    const auto picture = [&] { return model.encode_image(decode_image_file(input.image_path), input.image_options); };
    const auto ids = [&](const std::string& what) {
        return model.encode_ids_after(token_ids_typed(input.text, what), before);
    };
    switch (input.kind) {
    case RunInput::Kind::sentence: return model.encode_text_after(input.text, before);
    case RunInput::Kind::token_ids: return ids(input.ids_name);
    case RunInput::Kind::image: return picture();
    case RunInput::Kind::as_model_reads: break;
    }
    const ModelInfo info = model.info();
    if (info.reads_ids_only) return ids(input.ids_name + " (the checkpoint has no tokenizer files)");
    if (info.takes_image) return picture();
    if (input.ids_typed) return ids(input.ids_name);
    return model.encode_text_after(input.text, before);
}

// An encoder-decoder model's target, over the source `encoded` holds.
ModelInput encode_target(const Model& model, const RunInput& input, ModelInput encoded, GeneratedTarget* generated,
                         const LoadControl& control) {
    const ModelInfo& info = model.info();
    const bool targeted = !input.target.empty() || input.generate > 0;
    if (!info.encoder_decoder) {
        if (!targeted || !input.target_refused_by_other_models) return encoded;
        throw Error((input.generate > 0 ? std::string("--generate") : input.target_name) + ": " + info.name +
                    " is not an encoder-decoder model (a target is for T5 and BART)");
    }
    if (!input.target.empty()) {
        // The window's box holds ids where the checkpoint reads nothing else, as its source box does.
        const bool as_ids = input.target_ids || (input.kind == RunInput::Kind::as_model_reads && info.reads_ids_only);
        // The list's own errors name the flag already.
        const std::vector<std::int64_t> ids =
            as_ids ? token_ids_typed(input.target, input.target_name) : std::vector<std::int64_t>{};
        try {
            return as_ids ? model.encode_target_ids(encoded, ids) : model.encode_target_text(encoded, input.target);
        } catch (const Error& e) {
            throw Error(input.target_name + ": " + e.what());
        }
    }
    if (input.generate > 0) {
        // `encoded` is the decoder's start token over the source.
        const std::vector<std::int64_t>& source = encoded.source ? encoded.source->ids : encoded.ids;
        if (generated != nullptr && generated->steps == input.generate && generated->source_ids == source)
            return model.encode_target_ids(encoded, generated->target_ids);
        ModelInput decoded = generate_greedy(model, encoded, input.generate, control);
        if (generated != nullptr) *generated = {source, input.generate, decoded.ids};
        return decoded;
    }
    return encoded;
}

}   // namespace

ModelInput encode_run_input(const Model& model, const RunInput& input, const ModelInput& before,
                            GeneratedTarget* generated, const LoadControl& control) {
    ModelInput encoded = encode_target(model, input, encode_input(model, input, before), generated, control);
    if (model.info().zero_shot) {
        encode_labels(model, input, encoded);
    } else if (!input.labels.empty() && input.unscored_labels_refused) {
        throw Error(input.labels_name + ": " + model.info().name +
                    " scores no labels (labels are for the image and text towers of CLIP and SigLIP)");
    }
    return encoded;
}

}   // namespace headscope::session
