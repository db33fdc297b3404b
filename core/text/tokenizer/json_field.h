#pragma once
// One value of a tokenizer.json, with where it sits ("pre_tokenizer.pretokenizers[1].pattern")
// and the file it came from, so each refusal is one line naming the file and the field.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace headscope::tokenizer {

class JsonField {
public:
    using json = nlohmann::json;
    JsonField(const json& value, std::string path, const std::string& file);

    const json& value() const { return *value_; }
    const std::string& path() const { return path_; }
    const std::string& file() const { return *file_; }
    bool is_null() const { return value_->is_null(); }

    // "<file>: <path>: <what>"
    [[noreturn]] void fail(const std::string& what) const;
    // "<file>: <path>: expected <expected>, got <a brief of the value>"
    [[noreturn]] void expected(const std::string& expected) const;

    // A member that must be there (and not null).
    JsonField at(std::string_view key) const;
    // A member, or nullopt when absent or null.
    std::optional<JsonField> find(std::string_view key) const;
    JsonField at(std::size_t index) const;
    std::size_t size() const;   // of an array (refused otherwise)

    std::string string() const;
    bool boolean() const;
    std::int64_t integer(std::int64_t min, std::int64_t max) const;
    std::string string_or(std::string_view key, const std::string& fallback) const;
    bool bool_or(std::string_view key, bool fallback) const;
    // The "type" member, for the components written {"type": "ByteLevel", ...}.
    std::string type() const { return at("type").string(); }

private:
    const json* value_;
    std::string path_;
    const std::string* file_;
};

// Each entry of the array at `field`'s `key`, read by `read` (a Sequence's steps).
template <typename Read>
auto read_each(const JsonField& field, std::string_view key, Read&& read) {
    const JsonField list = field.at(key);
    std::vector<decltype(read(list))> items;
    for (std::size_t i = 0; i < list.size(); ++i) items.push_back(read(list.at(i)));
    return items;
}

// A value as messages show it: short, on one line.
std::string json_brief(const nlohmann::json& value);

}   // namespace headscope::tokenizer
