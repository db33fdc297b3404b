#pragma once
// File > Export map in the window: the selected head's map of the shown result written
// as CSV (token labels on both axes), NPY (the float32 array) or PNG (drawn as
// headscope-cli render draws it). Plain functions on a snapshot, so that they are
// tested without a window.

#include "core/render/colormap.h"
#include "session/snapshot.h"

#include <cstddef>
#include <string>

namespace headscope::session {

enum class MapFormat { csv, npy, png };

// "csv", "npy", "png".
const char* extension_of(MapFormat format);

// `folder`/<model>-head-<layer>.<head>.<extension>, a name that says what the file holds.
std::string default_export_path(const Snapshot& shown, int layer, int head, MapFormat format,
                                const std::string& folder);

// Writes head (layer, head)'s map to `path` (atomically: an existing file is replaced
// whole or not at all); the PNG in `colormap`, scaled to the head's max when `per_head`.
// Returns the bytes written; throws headscope::Error naming the path when it cannot be
// written, or the head when the snapshot has no such head.
std::size_t export_head_map(const Snapshot& shown, int layer, int head, MapFormat format, const std::string& path,
                            Colormap colormap, bool per_head);

}   // namespace headscope::session
