#include "core/text/tokenizer/json_field.h"

#include "core/base/error.h"
#include "core/base/json_file.h"
#include "core/base/shown.h"

namespace headscope::tokenizer {

std::string json_brief(const nlohmann::json& value) {
    // Small values as they are; anything else by its kind.
    if (value.is_primitive() || value.size() <= 4) {
        std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (text.size() <= 60) return text;
        if (value.is_primitive()) return text.substr(0, 60) + "...";
    }
    return std::string("a JSON ") + value.type_name();
}

JsonField::JsonField(const json& value, std::string path, const std::string& file)
    : value_(&value), path_(std::move(path)), file_(&file) {}

void JsonField::fail(const std::string& what) const {
    // The path may hold a vocabulary's token, and `what` a value from the file: both shown cut.
    throw Error(shown(*file_) + ": " + (path_.empty() ? std::string("the top level") : shown(path_)) + ": " +
                shown(what, 400));
}

void JsonField::expected(const std::string& expected) const {
    fail("expected " + expected + ", got " + json_brief(*value_));
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
    if (!value_->is_object()) expected("an object");
    const auto it = value_->find(key);
    if (it == value_->end() || it->is_null()) return std::nullopt;
    return JsonField(*it, json_child_path(path_, key), *file_);
}

JsonField JsonField::at(std::string_view key) const {
    if (auto found = find(key)) return *found;
    JsonField(*value_, json_child_path(path_, key), *file_).fail("is missing");
}

JsonField JsonField::at(std::size_t index) const {
    if (!value_->is_array()) expected("an array");
    return JsonField((*value_)[index], json_child_path(path_, index), *file_);
}

std::size_t JsonField::size() const {
    if (!value_->is_array()) expected("an array");
    return value_->size();
}

std::string JsonField::string() const {
    if (!value_->is_string()) expected("a string");
    return value_->get<std::string>();
}

bool JsonField::boolean() const {
    if (!value_->is_boolean()) expected("true or false");
    return value_->get<bool>();
}

std::int64_t JsonField::integer(std::int64_t min, std::int64_t max) const {
    const bool fits =
        value_->is_number_integer() &&
        !(value_->is_number_unsigned() && value_->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) &&
        value_->get<std::int64_t>() >= min && value_->get<std::int64_t>() <= max;
    if (!fits) expected("a whole number from " + std::to_string(min) + " to " + std::to_string(max));
    return value_->get<std::int64_t>();
}

std::string JsonField::string_or(std::string_view key, const std::string& fallback) const {
    const auto found = find(key);
    return found ? found->string() : fallback;
}

bool JsonField::bool_or(std::string_view key, bool fallback) const {
    const auto found = find(key);
    return found ? found->boolean() : fallback;
}

}   // namespace headscope::tokenizer
