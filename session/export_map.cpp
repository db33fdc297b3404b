#include "session/export_map.h"

#include "core/base/error.h"
#include "core/base/output_file.h"
#include "core/render/map_export.h"
#include "core/render/png_export.h"
#include "core/render/render.h"
#include "session/app_state.h"

#include <algorithm>
#include <filesystem>
#include <span>

namespace headscope::session {

const char* extension_of(MapFormat format) {
    switch (format) {
    case MapFormat::csv: return "csv";
    case MapFormat::npy: return "npy";
    case MapFormat::png: return "png";
    }
    return "";
}

std::string default_export_path(const Snapshot& shown, int layer, int head, MapFormat format,
                                const std::string& folder) {
    std::string model = model_display_name(shown.model.name);
    std::replace_if(
        model.begin(), model.end(), [](char c) { return c == ':' || c == '/' || c == ' '; }, '-');
    const std::string name =
        model + "-head-" + std::to_string(layer) + "." + std::to_string(head) + "." + extension_of(format);
    return (std::filesystem::path(folder) / name).string();
}

std::size_t export_head_map(const Snapshot& shown, int layer, int head, MapFormat format, const std::string& path,
                            Colormap colormap, bool per_head) {
    if (layer < 0 || head < 0 || layer >= shown.info.n_layers || head >= shown.info.n_heads) {
        throw Error("export: head " + std::to_string(layer) + "." + std::to_string(head) + " is not in " +
                    shown.info.name);
    }
    if (path.empty()) throw Error("export: no file name given");
    const std::shared_ptr<const Matrix> map = shown.head_map(layer, head);
    const std::vector<std::string>& labels = shown.input.labels;
    if (format == MapFormat::csv) {
        const std::string text = map_csv(*map, labels, labels);
        write_file_atomically(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
        return text.size();
    }
    std::vector<std::byte> bytes;
    if (format == MapFormat::npy) {
        bytes = map_npy(*map);
    } else {
        RenderStyle style;
        style.colormap = colormap;
        if (per_head) style.scale_max = std::max(map->maxCoeff(), 1e-12f);
        const Mask* allowed = shown.trace.mask ? &*shown.trace.mask : nullptr;
        bytes = encode_png(
            render_matrix(*map, allowed, labels, labels,
                          shown.info.name + ": head " + std::to_string(layer) + "." + std::to_string(head), style));
    }
    write_file_atomically(path, bytes);
    return bytes.size();
}

}   // namespace headscope::session
