#pragma once
// File > Export in the window: the selected head's map of the shown result (all of it, or
// the part in sight) as CSV (token labels on both axes), NPY (the float32 array), PNG
// (drawn as headscope-cli render draws it, at a chosen scale) or SVG (vector cells,
// labels and legend), and the Heads table (every head's metrics, its importance when
// scanned) as CSV. Plain functions on a snapshot, so that they are tested without a
// window; the whole run's file is session/run_file.h.

#include "core/analysis/ablation_effects.h"
#include "core/render/colormap.h"
#include "session/snapshot.h"

#include <cstddef>
#include <optional>
#include <string>

namespace headscope::session {

enum class MapFormat { csv, npy, png, svg };

// "csv", "npy", "png", "svg".
const char* extension_of(MapFormat format);
// The format a file name's extension names (any case), or nullopt.
std::optional<MapFormat> format_of_path(const std::string& path);

// A block of a map: rows [first_row, first_row + rows), columns likewise (the part a
// zoomed view shows).
struct MapRegion {
    int first_row = 0;
    int first_col = 0;
    int rows = 0;
    int cols = 0;
    bool operator==(const MapRegion& other) const = default;
};

// How a picture of a map is drawn.
struct MapLook {
    Colormap colormap = Colormap::viridis;
    bool per_head = false;   // the colours scaled to the head's max (of the whole map), not 0..1
    int png_scale = 1;       // each PNG pixel drawn as scale x scale
};

// `folder`/<model>-<what>.<extension>, a name that says what the file holds
// ("heads.safetensors", "metrics.csv").
std::string default_export_path(const Snapshot& shown, const std::string& what, const std::string& extension,
                                const std::string& folder);
// `folder`/<model>-head-<layer>.<head>.<extension>.
std::string default_export_path(const Snapshot& shown, int layer, int head, MapFormat format,
                                const std::string& folder);

// Writes head (layer, head)'s map, or `region` of it, to `path` (atomically: an existing
// file is replaced whole or not at all). Returns the bytes written; throws
// headscope::Error naming the path when it cannot be written, the head when the snapshot
// has no such head, the region when it is not inside the map.
std::size_t export_head_map(const Snapshot& shown, int layer, int head, MapFormat format, const std::string& path,
                            const MapLook& look, const std::optional<MapRegion>& region = std::nullopt);

// The Heads table: one row per layer x head, every metric of `shown`, and the importance
// scan's effect when `scan` is given (headscope-cli analyze's CSV). Throws when the run
// has no metrics and there is no scan.
std::size_t export_heads_table(const Snapshot& shown, const ImportanceScan* scan, const std::string& path);
// The same table's text (what the file holds; the window's Copy table pastes it with tabs).
std::string heads_table_csv(const Snapshot& shown, const ImportanceScan* scan);

}   // namespace headscope::session
