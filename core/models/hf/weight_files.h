#pragma once
// The weight files of a Hugging Face checkpoint folder: `model.safetensors`, or the shards
// `model.safetensors.index.json` lists, opened as one set of tensors by name.

#include "core/tensor/safetensors.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headscope {

// The weight tensors of a checkpoint folder: `model.safetensors`, or every shard that
// `model.safetensors.index.json` maps a tensor to. Each file is mapped and validated
// (core/tensor/safetensors.h); a tensor in two files, a shard that lacks a tensor the index
// puts in it, or a folder holding only PyTorch pickles is an error.
class HfWeights {
public:
    static HfWeights open(const std::string& folder);

    struct Entry {
        const TensorView* tensor = nullptr;             // valid while `owner` lives
        std::string file;                               // path of the file that holds it
        std::shared_ptr<const SafetensorsFile> owner;   // the mapped file: views of its bytes keep it
    };
    // Every tensor by its stored name.
    const std::map<std::string, Entry>& tensors() const { return tensors_; }
    // "model.safetensors" or "N shards (model-00001-of-0000N.safetensors, ...)", for messages.
    const std::string& description() const { return description_; }
    // The mapped files, for models that keep reading them (HfMappedFiles).
    const std::vector<std::shared_ptr<const SafetensorsFile>>& files() const { return files_; }

private:
    // Indexes every tensor of files_ (which no longer moves) by name, checking each
    // against the index's `weight_map` (empty for a single file).
    void index_tensors(const std::map<std::string, std::string>& weight_map, const std::string& index);

    std::vector<std::shared_ptr<const SafetensorsFile>> files_;
    std::map<std::string, Entry> tensors_;
    std::string description_;
};

}   // namespace headscope
