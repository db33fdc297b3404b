#include "core/models/model_part.h"

#include "core/base/error.h"

namespace headscope {

ModelPart::ModelPart(std::unique_ptr<Model> whole, const Model& part, const std::string& what)
    : whole_(std::move(whole)), part_(part), info_(part.info()) {
    info_.name = whole_->info().name;
    info_.description = info_.description + ", the " + what + " of " + whole_->info().name;
    info_.settings["tower"] = what;
}

std::unique_ptr<Model> model_tower(std::unique_ptr<Model> whole, const std::string& tower, const std::string& flag) {
    if (tower.empty()) return whole;
    if (tower != "text") throw Error(flag + ": '" + tower + "' is not a tower (expected text)");
    const Model* text = whole->text_tower();
    if (text == nullptr) {
        throw Error(flag + " text: " + whole->info().name + " has no text tower (CLIP models have one)");
    }
    return std::make_unique<ModelPart>(std::move(whole), *text, "text tower");
}

}   // namespace headscope
