#include "session/export_map.h"

#include "core/analysis/analysis_report.h"
#include "core/base/error.h"
#include "core/base/output_file.h"
#include "core/render/map_export.h"
#include "core/render/map_svg.h"
#include "core/render/png_export.h"
#include "core/render/render.h"
#include "session/app_state.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <span>

namespace headscope::session {

namespace {

void write_text(const std::string& path, const std::string& text) {
    write_file_atomically(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

std::vector<std::string> slice(const std::vector<std::string>& labels, int first, int count) {
    std::vector<std::string> part;
    for (int i = first; i < first + count && i < static_cast<int>(labels.size()); ++i) {
        part.push_back(labels[static_cast<std::size_t>(i)]);
    }
    return part;
}

// The part of a map a file shows: its values, its mask and the labels along each axis.
struct MapPart {
    Matrix values;
    std::optional<Mask> allowed;
    std::vector<std::string> rows;
    std::vector<std::string> cols;
    std::string title;
};

MapPart part_of(const Snapshot& shown, const Matrix& map, int layer, int head, const std::optional<MapRegion>& region) {
    const std::vector<std::string>& labels = shown.input.labels;
    const std::vector<std::string>& key_labels = shown.column_labels();   // the source's, for cross-attention
    MapPart part;
    part.title = shown.info.name + ": head " + std::to_string(layer) + "." + std::to_string(head);
    if (!region) {
        part.values = map;
        if (shown.trace.mask) part.allowed = *shown.trace.mask;
        part.rows = labels;
        part.cols = key_labels;
        return part;
    }
    const MapRegion& r = *region;
    if (r.first_row < 0 || r.first_col < 0 || r.rows < 1 || r.cols < 1 || r.first_row + r.rows > map.rows() ||
        r.first_col + r.cols > map.cols()) {
        throw Error("export: rows " + std::to_string(r.first_row) + "+" + std::to_string(r.rows) + ", columns " +
                    std::to_string(r.first_col) + "+" + std::to_string(r.cols) + " are not inside the " +
                    std::to_string(map.rows()) + " x " + std::to_string(map.cols()) + " map");
    }
    part.values = map.block(r.first_row, r.first_col, r.rows, r.cols);
    if (shown.trace.mask) part.allowed = shown.trace.mask->block(r.first_row, r.first_col, r.rows, r.cols);
    part.rows = slice(labels, r.first_row, r.rows);
    part.cols = slice(key_labels, r.first_col, r.cols);
    part.title += ", queries " + std::to_string(r.first_row) + ".." + std::to_string(r.first_row + r.rows - 1) +
                  ", keys " + std::to_string(r.first_col) + ".." + std::to_string(r.first_col + r.cols - 1);
    return part;
}

}   // namespace

const char* extension_of(MapFormat format) {
    switch (format) {
    case MapFormat::csv: return "csv";
    case MapFormat::npy: return "npy";
    case MapFormat::png: return "png";
    case MapFormat::svg: return "svg";
    }
    return "";
}

std::optional<MapFormat> format_of_path(const std::string& path) {
    std::string extension = std::filesystem::path(path).extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const MapFormat format : {MapFormat::csv, MapFormat::npy, MapFormat::png, MapFormat::svg}) {
        if (extension == std::string(".") + extension_of(format)) return format;
    }
    return std::nullopt;
}

std::string default_export_path(const Snapshot& shown, const std::string& what, const std::string& extension,
                                const std::string& folder) {
    std::string model = model_display_name(shown.model.name);
    std::replace_if(
        model.begin(), model.end(), [](char c) { return c == ':' || c == '/' || c == ' '; }, '-');
    return (std::filesystem::path(folder) / (model + "-" + what + "." + extension)).string();
}

std::string default_export_path(const Snapshot& shown, int layer, int head, MapFormat format,
                                const std::string& folder) {
    return default_export_path(shown, "head-" + std::to_string(layer) + "." + std::to_string(head),
                               extension_of(format), folder);
}

std::size_t export_head_map(const Snapshot& shown, int layer, int head, MapFormat format, const std::string& path,
                            const MapLook& look, const std::optional<MapRegion>& region) {
    if (layer < 0 || head < 0 || layer >= shown.info.n_layers || head >= shown.info.n_heads) {
        throw Error("export: head " + std::to_string(layer) + "." + std::to_string(head) + " is not in " +
                    shown.info.name);
    }
    if (path.empty()) throw Error("export: no file name given");
    const std::shared_ptr<const Matrix> map = shown.head_map(layer, head);
    const MapPart part = part_of(shown, *map, layer, head, region);
    const Mask* allowed = part.allowed ? &*part.allowed : nullptr;
    RenderStyle style;
    style.colormap = look.colormap;
    if (look.per_head) style.scale_max = std::max(map->maxCoeff(), 1e-12f);
    std::string text;
    std::vector<std::byte> bytes;
    switch (format) {
    case MapFormat::csv: text = map_csv(part.values, part.rows, part.cols); break;
    case MapFormat::svg: text = render_matrix_svg(part.values, allowed, part.rows, part.cols, part.title, style); break;
    case MapFormat::npy: bytes = map_npy(part.values); break;
    case MapFormat::png:
        bytes = encode_png(
            enlarged(render_matrix(part.values, allowed, part.rows, part.cols, part.title, style), look.png_scale));
        break;
    }
    if (!text.empty()) {
        write_text(path, text);
        return text.size();
    }
    write_file_atomically(path, bytes);
    return bytes.size();
}

std::size_t export_heads_table(const Snapshot& shown, const ImportanceScan* scan, const std::string& path) {
    if (path.empty()) throw Error("export: no file name given");
    const std::string csv = heads_table_csv(shown, scan);
    write_text(path, csv);
    return csv.size();
}

std::string heads_table_csv(const Snapshot& shown, const ImportanceScan* scan) {
    // The maps of a long run come before its metrics (Snapshot::numbers_pending): the
    // window offers the table once they are in.
    if (shown.numbers_pending) throw Error("the heads table: the heads' metrics are still being measured");
    AnalysisReport report;
    report.model = shown.info.name;
    report.tokens = shown.input.labels;
    report.n_layers = shown.info.n_layers;
    report.n_heads = shown.info.n_heads;
    report.metrics = shown.metrics;
    if (scan) report.importance = *scan;
    return analysis_csv(report);
}

}   // namespace headscope::session
