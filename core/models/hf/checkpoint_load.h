#pragma once
// What the one decoder (decoder.h) and the one encoder (encoder.h) share in loading a
// checkpoint folder around their families' tensor lists: config.json handed to a family's
// reader, the weights opened for binding (the table the loader takes tensors from, the
// files the model keeps reading), why a stack's tensors have their shapes, and the export
// and parameter count that walk the same list (core/models/tensor_binder.h).

#include "core/base/load_control.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"
#include "core/models/hf/weight_files.h"
#include "core/models/tensor_binder.h"

#include <cstdint>
#include <string>
#include <vector>

namespace headscope {

// "field = value", for the loader's messages.
std::string hf_field_is(const std::string& field, Eigen::Index value);

// Why a stack's tensors have their shapes, for the loader's messages.
struct StackShapeReasons {
    std::string e;     // "config.json: hidden_size = 768"
    std::string mlp;   // e + ", intermediate_size = 3072"
    StackShapeReasons(const std::string& width_field, Eigen::Index width, const std::string& mlp_field,
                      Eigen::Index mlp_width);
};

// `folder`/config.json.
std::string hf_config_path(const std::string& folder);

// `folder`/config.json read as fields and handed to a family's reader: what `read` returns.
template <typename Read>
auto read_hf_config(const std::string& folder, Read&& read) {
    const std::string path = hf_config_path(folder);
    const nlohmann::json json = read_hf_json_file(path);
    const HfFields f(json, path);
    return read(f);
}

// A folder's weights opened for binding: `table` hands the loader each tensor by its name
// without `prefix`; `mapped` are the files F32 weights are read from in place, which the
// model keeps and checks before each read.
struct HfCheckpointWeights {
    HfCheckpointWeights(const std::string& folder, const std::string& prefix, const LoadControl& control);
    HfWeights stored;
    HfMappedFiles mapped;
    HfTensorTable table;
};

// Every tensor `bind(binder)` names, as float under its name (Model::export_weights).
template <typename Bind>
std::vector<OwnedTensor> export_bound(Bind&& bind) {
    TensorExporter exporter;
    bind(exporter);
    return exporter.take();
}

// The values of every tensor `bind(binder)` names (ModelInfo::n_parameters).
template <typename Bind>
std::int64_t count_bound(Bind&& bind) {
    ParameterCounter counter;
    bind(counter);
    return counter.count();
}

}   // namespace headscope
