#include "ui/views/view_context.h"

#include "core/analysis/head_roles.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_pyramid.h"
#include "ui/widgets/ui_scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace headscope::ui {

using session::HeatScale;
using session::Snapshot;

namespace {

// Maps of at least this many cells are coloured off the window's thread (texture_pool.h):
// a 256 x 256 map takes about a frame's share of a core, a 1024 x 1024 one several frames.
constexpr Eigen::Index background_cells = 256 * 256;

// A map's texture levels under the colour map and scale.
MipLevels weights_levels(const Matrix& weights, const Mask* allowed, Colormap map, HeatScale scale,
                         LevelThreads threads = LevelThreads::calling) {
    switch (scale) {
    case HeatScale::per_head:
        return heatmap_mip_levels(weights, allowed, map, std::max(weights.maxCoeff(), 1e-12f), threads);
    case HeatScale::log: {
        // log(1 + 999 w) / log(1000): 0 -> 0, 0.001 -> 0.1, 1 -> 1.
        const Matrix lifted = weights.unaryExpr([](float w) { return std::log1p(999.0f * w) / std::log(1000.0f); });
        return heatmap_mip_levels(lifted, allowed, map, 1.0f, threads);
    }
    case HeatScale::shared: break;
    }
    return heatmap_mip_levels(weights, allowed, map, 1.0f, threads);
}

}   // namespace

HeadCaption head_caption(const Snapshot& shown, int layer, int head) {
    const auto l = static_cast<std::size_t>(layer);
    const auto h = static_cast<std::size_t>(head);
    const ModelInfo& info = shown.info;
    if (!info.head_roles.empty() && !info.head_roles[l][h].empty()) {
        const std::string& role = info.head_roles[l][h];
        return {role.substr(0, role.find(':')), "built to: " + role};
    }
    const std::size_t index = l * static_cast<std::size_t>(info.n_heads) + h;
    if (index >= shown.metrics.size()) return {};
    const std::optional<MeasuredRole> role = measured_role(shown.metrics[index], shown.input.grid_width > 0);
    if (!role) return {};
    char text[160];
    const bool vowel = std::string_view("aeiou").find(role->name.front()) != std::string_view::npos;
    std::snprintf(text, sizeof text, "learned: %s %s head (%s = %.2f on this input)", vowel ? "an" : "a",
                  role->name.c_str(), std::string(metric_name(role->metric)).c_str(), role->score);
    return {role->name, text};
}

const char* kind_heading(session::AttentionKind kind) {
    switch (kind) {
    case session::AttentionKind::encoder: return "Encoder head";
    case session::AttentionKind::cross: return "Cross-attention head";
    case session::AttentionKind::decoder: break;
    }
    return "Head";
}

std::string ViewContext::result_key() const {
    return std::to_string(shown_->generation) + " " + session::attention_kind_name(state_.kind);
}

ViewContext::ViewContext(std::shared_ptr<const Snapshot> shown, session::AppState& state, TexturePool& textures,
                         session::BackgroundJobs& scan_jobs, session::BackgroundJobs& view_jobs, WindowActions actions)
    : shown_(std::move(shown)), state_(state), textures_(textures), scan_jobs_(scan_jobs), view_jobs_(view_jobs),
      actions_(std::move(actions)) {}

const session::ComputeProgress* ViewContext::landing() const {
    // What lands is the decoder's own maps: an encoder-decoder's other kinds wait for the result.
    if (computing_ == nullptr || !*computing_ || state_.kind != session::AttentionKind::decoder) return nullptr;
    const session::ComputeProgress& progress = **computing_;
    const ModelInfo& info = shown_->info;
    const auto landed = static_cast<std::size_t>(progress.layers_done * info.n_heads);
    const bool fits = progress.landed_thumbnails && progress.landed_metrics && progress.model == shown_->model.name &&
                      progress.n_layers == info.n_layers && progress.landed_thumbnails->size() == landed &&
                      progress.landed_metrics->size() == landed;
    return fits ? &progress : nullptr;
}

const std::vector<HeadMetrics>& ViewContext::head_metrics() {
    const session::ComputeProgress* progress = landing();
    if (progress == nullptr || shown_->metrics.size() < progress->landed_metrics->size()) return shown_->metrics;
    if (!merged_metrics_) {
        merged_metrics_ = shown_->metrics;
        std::copy(progress->landed_metrics->begin(), progress->landed_metrics->end(), merged_metrics_->begin());
    }
    return *merged_metrics_;
}

void draw_landing_line(ViewContext& context) {
    const session::ComputeProgress* landing = context.landing();
    if (landing == nullptr) return;
    ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.35f, 1.0f),
                       "Filling in: layers 0-%ld are the new run's (%ld of %ld done); the rest show the last result",
                       static_cast<long>(landing->layers_done - 1), static_cast<long>(landing->layers_done),
                       static_cast<long>(landing->n_layers));
}

void ViewContext::remember_file(const std::string& path) const {
    if (actions_.remember_file) actions_.remember_file(path);
}

void ViewContext::show_view(const std::string& view, const std::string& settings) const {
    if (actions_.show_view) actions_.show_view(view, settings);
}

const Mask* ViewContext::mask() const { return shown_ && shown_->trace.mask ? &*shown_->trace.mask : nullptr; }

const HeatmapTexture& ViewContext::weights_texture(const std::string& key, const Matrix& weights) {
    if (weights.size() < background_cells) {
        return textures_.get(key, [&] { return weights_levels(weights, mask(), state_.colormap, state_.scale); });
    }
    // Built after this frame, on another thread, from the shown snapshot itself: the job
    // owns it (shared_ptr aliases of the map and the mask), so a snapshot the window drops
    // meanwhile lives until the job is done, and the job lets go of it on its own thread
    // (the last owner of a GPT-2 result at T = 1024 frees a gigabyte). Not from a copy: a
    // 4 MB copy made on the window's thread as the worker freed memory stalled frames.
    return textures_.get_in_background(key, [&]() -> TexturePool::BackgroundJob {
        std::shared_ptr<const Matrix> map(shown_, &weights);
        std::shared_ptr<const Mask> allowed = mask() != nullptr ? std::shared_ptr<const Mask>(shown_, mask()) : nullptr;
        return [map = std::move(map), allowed = std::move(allowed), colormap = state_.colormap,
                scale = state_.scale]() mutable {
            const std::shared_ptr<const Matrix> held_map = std::move(map);
            const std::shared_ptr<const Mask> held_mask = std::move(allowed);
            // Off the window's thread: the levels may use every core (the window waits for them).
            return weights_levels(*held_map, held_mask.get(), colormap, scale, LevelThreads::every_core);
        };
    });
}

const HeatmapTexture& ViewContext::signed_texture(const std::string& key, const Matrix& values, const Mask* allowed,
                                                  float least_bound) {
    return textures_.get(key, [&] {
        // Diverging: 0 in the middle, the largest |value| at either end.
        Matrix shifted = centre_signed(values, least_bound);
        // The masked scores hold -inf where the mask forbids: drawn as masked (grey, as the
        // legend says), not as "not finite", which is checked first and kept for the rest.
        if (allowed != nullptr && allowed->rows() == values.rows() && allowed->cols() == values.cols()) {
            shifted = allowed->select(shifted.array(), 0.5f).matrix();
        }
        return heatmap_mip_levels(shifted, allowed, Colormap::coolwarm, 1.0f);
    });
}

PictureRect ViewContext::draw_picture_with_heat(const HeatmapTexture& heat, int grid_w, int grid_h, ImVec2 room) {
    const HeatmapTexture& picture = textures_.get("picture", [&] { return rgba_of(shown_->image); });
    const float aspect = static_cast<float>(grid_w) / static_cast<float>(grid_h);
    const float width = std::min(std::max(px(128.0f), room.x), std::max(px(128.0f), room.y) * aspect);
    const float height = width / aspect;
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddImage(picture.id(), origin, ImVec2(origin.x + width, origin.y + height));
    // Translucent: the picture shows through the map.
    draw->AddImage(heat.id(), origin, ImVec2(origin.x + width, origin.y + height), ImVec2(0, 0), ImVec2(1, 1),
                   IM_COL32(255, 255, 255, 150));
    return {origin, width, height};
}

std::string ViewContext::importance_key() const {
    // The scan depends on the model, the input and the mask (all in the snapshot's input
    // key), never on the disabled heads.
    return "importance " + shown_->input_key;
}

session::BackgroundJobs::Work ViewContext::importance_work() const {
    const std::shared_ptr<const Snapshot> snapshot = shown_;
    if (!snapshot->model_ref) return {};   // an encoder-decoder's other kinds: no scan of their own
    return session::BackgroundJobs::job<ImportanceScan>([snapshot](const LoadControl& control) {
        RunOptions options = snapshot->options;
        options.disabled_heads = options.disabled_encoder_heads = options.disabled_cross_heads = {};
        options.last_logit_rows = -1;   // KL over every position, whatever rows the shown run kept
        // A long input's runs stream their maps here too: the scan reads outputs only.
        if (snapshot->maps_streamed) options.on_map = [](Eigen::Index, Eigen::Index, const Matrix&) {};
        return std::make_shared<const ImportanceScan>(
            importance_scan(*snapshot->model_ref, snapshot->input, options, control));
    });
}

void ViewContext::start_importance_scan() {
    if (shown_->model_ref) scan_jobs_.restart(importance_key(), importance_work());
}

std::shared_ptr<const ImportanceScan> ViewContext::importance() const {
    auto scan = scan_jobs_.result<ImportanceScan>(importance_key());
    // Never another model's shape (the key names the model; this is the guard for indexing).
    if (scan && (scan->effect.rows() != shown_->info.n_layers || scan->effect.cols() != shown_->info.n_heads))
        return nullptr;
    return scan;
}

}   // namespace headscope::ui
