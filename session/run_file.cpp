#include "session/run_file.h"

#include "core/base/error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <span>

namespace headscope::session {

namespace {

std::span<const std::byte> bytes_of(const Matrix& m) {
    return std::as_bytes(std::span(m.data(), static_cast<std::size_t>(m.size())));
}

}   // namespace

std::string run_file_map_key(const ModelInfo& info, Eigen::Index layer) {
    return (info.zero_shot ? "vision.attn." : info.encoder_decoder ? "decoder.attn." : "attn.") + std::to_string(layer);
}

bool run_file_has_logits(const ModelInfo& info, const ModelInput& input) {
    return info.zero_shot ? !input.prompts.empty() : info.n_outputs > 0;
}

std::vector<SafetensorsWriter::Entry> run_file_entries(const ModelInfo& info, const ModelInput& input,
                                                       const std::vector<Eigen::Index>& layers, std::size_t heads,
                                                       bool with_logits) {
    const auto T = static_cast<std::int64_t>(input.labels.size());
    std::vector<SafetensorsWriter::Entry> entries;
    for (const Eigen::Index l : layers) {
        entries.push_back({run_file_map_key(info, l), DType::F32, {static_cast<std::int64_t>(heads), T, T}});
    }
    if (input.source) {
        const auto Ts = static_cast<std::int64_t>(input.source->ids.size());
        const auto H = static_cast<std::int64_t>(info.n_heads);
        for (Eigen::Index l = 0; l < info.encoder_layers; ++l)
            entries.push_back({"encoder.attn." + std::to_string(l), DType::F32, {H, Ts, Ts}});
        for (Eigen::Index l = 0; l < info.n_layers; ++l)
            entries.push_back({"cross.attn." + std::to_string(l), DType::F32, {H, T, Ts}});
        entries.push_back({"input_ids", DType::I64, {Ts}});
        entries.push_back({"decoder_input_ids", DType::I64, {T}});
    } else if (!input.ids.empty()) {
        entries.push_back({"input_ids", DType::I64, {T}});
    }
    if (info.probe_heads > 0) entries.push_back({"vision.pool.attn", DType::F32, {info.probe_heads, 1, T}});
    for (std::size_t i = 0; i < input.prompts.size(); ++i) {
        const auto T_i = static_cast<std::int64_t>(input.prompts[i].ids.size());
        const std::string at = "text." + std::to_string(i) + ".";
        for (Eigen::Index l = 0; l < info.label_layers; ++l) {
            entries.push_back({at + "attn." + std::to_string(l), DType::F32, {info.label_heads, T_i, T_i}});
        }
        entries.push_back({at + "input_ids", DType::I64, {T_i}});
    }
    if (with_logits && run_file_has_logits(info, input)) {
        if (info.zero_shot) {
            entries.push_back({"logits_per_image", DType::F32, {static_cast<std::int64_t>(input.prompts.size())}});
        } else {
            entries.push_back(
                {"logits", DType::F32, info.classifier ? Shape{info.n_outputs} : Shape{T, info.n_outputs}});
        }
    }
    return entries;
}

std::map<std::string, std::string> run_file_metadata(const ModelInfo& info, const ModelInput& input, bool causal) {
    std::map<std::string, std::string> metadata = {
        {"tokens", nlohmann::json(input.labels).dump()},
        {"model", info.name},
        {"settings", nlohmann::json(info.settings).dump()},
        {"causal", causal ? "on" : "off"},
    };
    if (input.source) metadata["source_tokens"] = nlohmann::json(input.source->labels).dump();
    if (!input.prompts.empty()) {
        nlohmann::json tokens = nlohmann::json::array();
        for (const ModelInput& prompt : input.prompts) tokens.push_back(prompt.labels);
        metadata["labels"] = nlohmann::json(input.prompt_names).dump();
        metadata["label_tokens"] = tokens.dump();
    }
    return metadata;
}

void write_run_zero_shot(SafetensorsWriter& file, const Snapshot& run) {
    if (run.info.probe_heads > 0) {
        if (run.trace.probe_maps.rows() != run.info.probe_heads) throw Error("export: the run kept no probe maps");
        file.write("vision.pool.attn", 0, bytes_of(run.trace.probe_maps));   // [H, T] row-major: [H, 1, T]
    }
    const auto& prompts = run.input.prompts;
    if (run.trace.prompt_traces.size() != prompts.size()) {
        throw Error("export: the run scored " + std::to_string(run.trace.prompt_traces.size()) + " of its " +
                    std::to_string(prompts.size()) + " labels");
    }
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        const std::string at = "text." + std::to_string(i) + ".";
        const ModelTrace& text = run.trace.prompt_traces[i];
        const auto T_i = static_cast<std::uint64_t>(prompts[i].ids.size());
        for (std::size_t l = 0; l < text.layers.size(); ++l) {
            const auto& heads = text.layers[l].heads;
            for (std::size_t h = 0; h < heads.size(); ++h) {
                file.write(at + "attn." + std::to_string(l), h * T_i * T_i * sizeof(float), bytes_of(heads[h].weights));
            }
        }
        file.write(at + "input_ids", 0, std::as_bytes(std::span(prompts[i].ids)));
    }
}

void write_run_input_ids(SafetensorsWriter& file, const ModelInput& input) {
    if (input.source) {
        file.write("input_ids", 0, std::as_bytes(std::span(input.source->ids)));
        file.write("decoder_input_ids", 0, std::as_bytes(std::span(input.ids)));
    } else if (!input.ids.empty()) {
        file.write("input_ids", 0, std::as_bytes(std::span(input.ids)));
    }
}

void write_run_encoder_decoder(SafetensorsWriter& file, const Snapshot& run) {
    if (!run.input.source) return;
    const auto write_layers = [&](const LayerTraces& layers, const std::string& kind, std::size_t expected) {
        if (layers.size() != expected) throw Error("export: the run kept no " + kind + " maps");
        for (std::size_t l = 0; l < layers.size(); ++l) {
            std::uint64_t offset = 0;
            for (const HeadTrace& head : layers[l].heads) {
                file.write(kind + ".attn." + std::to_string(l), offset, bytes_of(head.weights));
                offset += static_cast<std::uint64_t>(head.weights.size()) * sizeof(float);
            }
        }
    };
    write_layers(run.trace.encoder_layers, "encoder", static_cast<std::size_t>(run.info.encoder_layers));
    write_layers(run.trace.cross_layers, "cross", static_cast<std::size_t>(run.info.n_layers));
}

void write_run_logits(SafetensorsWriter& file, const Snapshot& run, bool in_pieces) {
    if (!in_pieces) {
        file.write(run.info.zero_shot ? "logits_per_image" : "logits", 0, bytes_of(run.trace.logits));
        return;
    }
    if (!run.model_ref) throw Error("export: the run kept too few logits rows to write them all");
    const Eigen::Index T = run.trace.hidden.rows();
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(run.info.n_outputs) * sizeof(float);
    for (Eigen::Index first = 0; first < T; first += logit_piece_rows) {
        const Eigen::Index n = std::min<Eigen::Index>(logit_piece_rows, T - first);
        const Matrix piece = run.model_ref->logits_rows(run.trace, first, n);
        file.write("logits", static_cast<std::uint64_t>(first) * row_bytes, bytes_of(piece));
    }
}

std::uint64_t write_run_file(const Snapshot& shown, const std::string& path, const LoadControl& control) {
    if (path.empty()) throw Error("export: no file name given");
    const ModelInfo& info = shown.info;
    std::vector<Eigen::Index> layers(static_cast<std::size_t>(info.n_layers));
    for (Eigen::Index l = 0; l < info.n_layers; ++l) layers[static_cast<std::size_t>(l)] = l;
    const bool with_logits = shown.logit_rows() > 0;
    SafetensorsWriter file(
        path, run_file_entries(info, shown.input, layers, static_cast<std::size_t>(info.n_heads), with_logits),
        run_file_metadata(info, shown.input, shown.causal));
    write_run_input_ids(file, shown.input);
    const auto T = static_cast<std::uint64_t>(shown.input.labels.size());
    const int heads = info.n_heads;
    for (int l = 0; l < info.n_layers; ++l) {
        for (int h = 0; h < heads; ++h) {
            control.report(static_cast<double>(l * heads + h) / static_cast<double>(info.n_layers * heads));
            file.write(run_file_map_key(info, l), static_cast<std::uint64_t>(h) * T * T * sizeof(float),
                       bytes_of(*shown.head_map(l, h)));
        }
    }
    write_run_zero_shot(file, shown);
    write_run_encoder_decoder(file, shown);
    if (with_logits) write_run_logits(file, shown, shown.trace.logits.rows() < shown.logit_rows());
    control.report(1.0);
    file.finish();
    return std::filesystem::file_size(path);
}

}   // namespace headscope::session
