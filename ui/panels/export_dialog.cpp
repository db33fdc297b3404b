#include "ui/panels/export_dialog.h"

#include "core/base/error.h"
#include "session/run_file.h"
#include "ui/widgets/job_progress.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

#include <cstdio>
#include <filesystem>

namespace headscope::ui {

using session::MapFormat;

namespace {

std::string size_text(std::uint64_t bytes) {
    char text[48];
    if (bytes < 10'000) {
        std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
    } else {
        std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
    }
    return text;
}

std::string region_text(const session::MapRegion& r) {
    char text[96];
    std::snprintf(text, sizeof text, "queries %d..%d, keys %d..%d", r.first_row, r.first_row + r.rows - 1, r.first_col,
                  r.first_col + r.cols - 1);
    return text;
}

}   // namespace

std::string ExportDialog::default_path() const {
    switch (what_) {
    case ExportWhat::head_map: return session::default_export_path(*shown_, layer_, head_, format_, folder_);
    case ExportWhat::every_head: return session::default_export_path(*shown_, "heads", "safetensors", folder_);
    case ExportWhat::heads_table: return session::default_export_path(*shown_, "metrics", "csv", folder_);
    }
    return "";
}

void ExportDialog::open(std::shared_ptr<const session::Snapshot> shown, std::shared_ptr<const session::Snapshot> whole,
                        const session::AppState& state, std::optional<session::MapRegion> in_sight,
                        std::shared_ptr<const ImportanceScan> scan) {
    shown_ = std::move(shown);
    whole_ = std::move(whole);
    scan_ = std::move(scan);
    in_sight_ = in_sight;
    layer_ = state.layer;
    head_ = state.head;
    if (folder_.empty()) {
        std::error_code ec;
        folder_ = std::filesystem::current_path(ec).string();
    }
    prompt_.path = default_path();
    prompt_.clear_report();
    prompt_.focus();
    open_ = true;
}

void ExportDialog::draw_choices() {
    const auto choose = [this](const char* label, ExportWhat what) {
        if (ImGui::RadioButton(label, what_ == what) && what_ != what) {
            what_ = what;
            prompt_.path = default_path();
        }
    };
    char map_label[48];
    std::snprintf(map_label, sizeof map_label, "Head %d.%d's map", layer_, head_);
    choose(map_label, ExportWhat::head_map);
    ImGui::SameLine();
    choose("Every head (safetensors)", ExportWhat::every_head);
    ImGui::SameLine();
    choose("Heads table (CSV)", ExportWhat::heads_table);
    if (what_ == ExportWhat::every_head) {
        ImGui::TextDisabled("attn.L [H, T, T] per layer, input_ids, logits: what headscope-cli dump writes");
    } else if (what_ == ExportWhat::heads_table) {
        ImGui::TextDisabled(scan_ ? "every metric of every head, and the importance scan's effect"
                                  : "every metric of every head (scan importance in the Heads view to add it)");
    }
    if (what_ != ExportWhat::head_map) return;
    constexpr MapFormat formats[] = {MapFormat::csv, MapFormat::npy, MapFormat::png, MapFormat::svg};
    constexpr const char* names[] = {"CSV", "NPY", "PNG", "SVG"};
    for (int i = 0; i < 4; ++i) {
        if (i > 0) ImGui::SameLine();
        if (ImGui::RadioButton(names[i], format_ == formats[i]) && format_ != formats[i]) {
            format_ = formats[i];
            // The file name follows the format.
            std::filesystem::path path(prompt_.path);
            path.replace_extension(session::extension_of(format_));
            prompt_.path = path.string();
        }
    }
    if (format_ == MapFormat::png) {
        ImGui::SameLine();
        ImGui::TextUnformatted("  scale");
        for (const int scale : {1, 2, 4}) {
            ImGui::SameLine();
            const std::string label = std::to_string(scale) + "x";
            if (ImGui::RadioButton(label.c_str(), png_scale_ == scale)) png_scale_ = scale;
        }
    }
    if (in_sight_) {
        ImGui::Checkbox(("only the part in sight (" + region_text(*in_sight_) + ")").c_str(), &only_in_sight_);
    } else {
        ImGui::TextDisabled("the whole %zu x %zu map (zoom in to export a part)", shown_->input.labels.size(),
                            shown_->column_labels().size());
    }
}

void ExportDialog::draw(const session::AppState& state) {
    if (!open_ || !shown_) return;
    // As wide as a long path needs, as tall as its lines (the outcome line comes later).
    ImGui::SetNextWindowSizeConstraints(ImVec2(px(680.0f), 0.0f), ImVec2(px(680.0f), 10000.0f));
    if (!ImGui::Begin("Export", &open_, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::End();
        return;
    }
    ImGui::Text("From %s on %zu tokens", shown_->info.name.c_str(), shown_->input.labels.size());
    draw_choices();
    const bool writing = jobs_.busy();
    // A long run's metrics follow its maps (Snapshot::numbers_pending): the table waits for them.
    const bool measuring = what_ == ExportWhat::heads_table && shown_->numbers_pending;
    ImGui::BeginDisabled(writing || measuring);
    if (prompt_.draw("Save", true) && !writing && !measuring) save(state);
    ImGui::EndDisabled();
    if (measuring) ImGui::TextDisabled("the heads' metrics are being measured...");
    if (writing) draw_job_progress(jobs_, job_key_, "writing", {});
    show_outcome();
    ImGui::End();
}

void ExportDialog::save(const session::AppState& state) {
    const std::string path = prompt_.path;
    // A typed extension names the map's format: "map.svg" is an SVG whichever was ticked.
    if (what_ == ExportWhat::head_map) {
        if (const auto typed = session::format_of_path(path)) format_ = *typed;
    }
    const session::MapLook look{state.colormap, state.scale == session::HeatScale::per_head, png_scale_};
    const std::optional<session::MapRegion> region = only_in_sight_ ? in_sight_ : std::nullopt;
    auto work = [what = what_, shown = shown_, whole = whole_, scan = scan_, layer = layer_, head = head_,
                 format = format_, look, region, path](const LoadControl& control) {
        std::uint64_t bytes = 0;
        switch (what) {
        case ExportWhat::head_map:
            bytes = session::export_head_map(*shown, layer, head, format, path, look, region);
            break;
        case ExportWhat::every_head: bytes = session::write_run_file(*whole, path, control); break;
        case ExportWhat::heads_table: bytes = session::export_heads_table(*shown, scan.get(), path); break;
        }
        return std::make_shared<const std::string>("wrote " + path + " (" + size_text(bytes) + ")");
    };
    job_key_ = "export " + std::to_string(++saves_);
    jobs_.restart(job_key_, session::BackgroundJobs::job<std::string>(std::move(work)));
    prompt_.clear_report();
    folder_ = std::filesystem::path(path).parent_path().string();
}

void ExportDialog::show_outcome() {
    if (job_key_.empty() || jobs_.busy()) return;
    if (const auto written = jobs_.result<std::string>(job_key_)) {
        prompt_.report(*written, false);
    } else if (const std::string error = jobs_.error(job_key_); !error.empty()) {
        prompt_.report(error == "cancelled" ? "cancelled: nothing was written" : error, true);
    }
    job_key_.clear();
}

}   // namespace headscope::ui
