#include "core/models/hf/weight_files.h"

#include "core/base/error.h"
#include "core/models/hf/config_fields.h"

#include <filesystem>
#include <set>

namespace headscope {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Which shard `index` (model.safetensors.index.json) says holds each tensor.
std::map<std::string, std::string> read_weight_map(const std::string& index) {
    const json index_json = read_hf_json_file(index);
    const HfFields f(index_json, index);
    const json* map = f.find("weight_map");
    if (map == nullptr || !map->is_object() || map->empty()) {
        f.fail("weight_map", "an object {tensor name: shard file name}", map == nullptr ? json() : *map);
    }
    std::map<std::string, std::string> weight_map;
    for (const auto& [name, file] : map->items()) {
        if (!file.is_string())
            f.fail("weight_map", "tensor " + hf_quoted(name) + ": expected a file name, got " + hf_brief(file));
        const std::string shard = file.get<std::string>();
        if (shard.empty() || shard == "." || shard == ".." || shard.find('/') != std::string::npos ||
            shard.find('\\') != std::string::npos) {
            f.fail("weight_map",
                   "tensor " + hf_quoted(name) + ": " + hf_quoted(shard) + " is not a file name in this folder");
        }
        weight_map[name] = shard;
    }
    return weight_map;
}

// A folder without safetensors: says how to convert PyTorch pickles when it holds them.
[[noreturn]] void refuse_folder_without_safetensors(const std::string& folder) {
    const fs::path dir(folder);
    std::error_code ec;
    if (fs::exists(dir / "pytorch_model.bin", ec)) {
        throw Error(folder + ": only pytorch_model.bin (a pickle, which headscope does not load); convert it once, "
                             "in that folder: python3 -c \"import torch; from safetensors.torch import save_file; "
                             "save_file({k: v.contiguous() for k, v in torch.load('pytorch_model.bin', "
                             "map_location='cpu').items()}, 'model.safetensors', metadata={'format': 'pt'})\"");
    }
    if (fs::exists(dir / "pytorch_model.bin.index.json", ec)) {
        throw Error(folder + ": only pytorch_model-*.bin shards (pickles, which headscope does not load); re-save "
                             "the model as safetensors with transformers: "
                             "Model.from_pretrained(folder).save_pretrained(folder, safe_serialization=True)");
    }
    throw Error(folder + ": no model.safetensors or model.safetensors.index.json");
}

}   // namespace

HfWeights HfWeights::open(const std::string& folder) {
    HfWeights w;
    const fs::path dir(folder);
    const std::string single = (dir / "model.safetensors").string();
    const std::string index = (dir / "model.safetensors.index.json").string();
    std::error_code ec;
    // Which shard the index says holds each tensor (empty for a single file).
    std::map<std::string, std::string> weight_map;
    if (fs::exists(single, ec)) {
        w.files_.push_back(std::make_shared<const SafetensorsFile>(SafetensorsFile::open(single)));
        w.description_ = "model.safetensors";
    } else if (fs::exists(index, ec)) {
        weight_map = read_weight_map(index);
        std::set<std::string> shards;
        for (const auto& [name, shard] : weight_map) shards.insert(shard);
        for (const std::string& shard : shards) {
            w.files_.push_back(std::make_shared<const SafetensorsFile>(SafetensorsFile::open((dir / shard).string())));
        }
        w.description_ = std::to_string(shards.size()) + " shards (" + hf_join({shards.begin(), shards.end()}) + ")";
    } else {
        refuse_folder_without_safetensors(folder);
    }
    w.index_tensors(weight_map, index);
    for (const auto& [name, shard] : weight_map) {
        if (w.tensors_.find(name) == w.tensors_.end()) {
            throw Error((dir / shard).string() + ": no tensor " + hf_quoted(name) + ", which " + index + " puts there");
        }
    }
    return w;
}

void HfWeights::index_tensors(const std::map<std::string, std::string>& weight_map, const std::string& index) {
    for (const std::shared_ptr<const SafetensorsFile>& shared : files_) {
        const SafetensorsFile& file = *shared;
        const std::string shard = fs::path(file.path()).filename().string();
        for (const TensorView& t : file.tensors()) {
            const auto [it, inserted] = tensors_.emplace(t.name, Entry{&t, file.path(), shared});
            if (!inserted) {
                throw Error(file.path() + ": tensor " + hf_quoted(t.name) + " is also in " + it->second.file);
            }
            if (weight_map.empty()) continue;
            const auto listed = weight_map.find(t.name);
            if (listed == weight_map.end()) {
                throw Error(file.path() + ": tensor " + hf_quoted(t.name) + " is not listed in " + index);
            }
            if (listed->second != shard) {
                throw Error(file.path() + ": tensor " + hf_quoted(t.name) + " is here, but " + index + " puts it in " +
                            listed->second);
            }
        }
    }
}

}   // namespace headscope
