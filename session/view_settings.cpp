#include "session/view_settings.h"

#include "core/base/error.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace headscope::session {

using nlohmann::json;

struct SettingsReader::Parsed {
    json object;
};

SettingsReader::SettingsReader(const std::string& text)
    : parsed_(std::make_unique<Parsed>(Parsed{json::parse(text, nullptr, false)})) {
    if (!parsed_->object.is_object()) error_ = "expected a JSON object of settings, {...}";
}

SettingsReader::~SettingsReader() = default;

void SettingsReader::fail(const char* key, const std::string& why) {
    if (ok()) error_ = "'" + std::string(key) + "': " + why;
}

namespace {

// The value under `key`, or null when it is left out or an error came first.
const json* field(const json& object, const char* key, bool ok) {
    if (!ok) return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

template <typename Number>
std::string range_text(Number low, Number high) {
    char text[96];
    std::snprintf(text, sizeof text, "expected a number in %g..%g", static_cast<double>(low),
                  static_cast<double>(high));
    return text;
}

}   // namespace

bool SettingsReader::has(const char* key) const { return field(parsed_->object, key, ok()) != nullptr; }

void SettingsReader::read(const char* key, bool& into) {
    const json* value = field(parsed_->object, key, ok());
    if (value == nullptr) return;
    if (!value->is_boolean()) return fail(key, "expected true or false");
    into = value->get<bool>();
}

void SettingsReader::read(const char* key, int& into, int low, int high) {
    const json* value = field(parsed_->object, key, ok());
    if (value == nullptr) return;
    if (!value->is_number_integer() || value->get<long long>() < low || value->get<long long>() > high) {
        return fail(key, "expected a whole number in " + std::to_string(low) + ".." + std::to_string(high));
    }
    into = value->get<int>();
}

void SettingsReader::read(const char* key, double& into, double low, double high) {
    const json* value = field(parsed_->object, key, ok());
    if (value == nullptr) return;
    // NaN fails both comparisons: refused with the rest.
    if (!value->is_number() || !(value->get<double>() >= low && value->get<double>() <= high)) {
        return fail(key, range_text(low, high));
    }
    into = value->get<double>();
}

void SettingsReader::read(const char* key, float& into, float low, float high) {
    double wide = into;
    read(key, wide, low, high);
    into = static_cast<float>(wide);
}

void SettingsReader::read(const char* key, std::string& into) {
    const json* value = field(parsed_->object, key, ok());
    if (value == nullptr) return;
    if (!value->is_string()) return fail(key, "expected a string");
    into = value->get<std::string>();
}

struct SettingsWriter::Object {
    json object = json::object();
};

SettingsWriter::SettingsWriter() : object_(std::make_unique<Object>()) {}
SettingsWriter::~SettingsWriter() = default;

SettingsWriter& SettingsWriter::set(const char* key, bool value) {
    object_->object[key] = value;
    return *this;
}

SettingsWriter& SettingsWriter::set(const char* key, int value) {
    object_->object[key] = value;
    return *this;
}

SettingsWriter& SettingsWriter::set(const char* key, double value) {
    object_->object[key] = value;
    return *this;
}

SettingsWriter& SettingsWriter::set(const char* key, const std::string& value) {
    object_->object[key] = value;
    return *this;
}

std::string SettingsWriter::text() const { return object_->object.dump(); }

std::string merge_settings(const std::string& base, const std::string& patch, const std::string& label) {
    json merged = base.empty() ? json::object() : json::parse(base, nullptr, false);
    const json changes = json::parse(patch, nullptr, false);
    if (!merged.is_object() || !changes.is_object()) throw Error(label + ": expected a JSON object of settings");
    merged.merge_patch(changes);
    return merged.dump();
}

}   // namespace headscope::session
