#pragma once
// A view's own settings (ui/views/view.h: View::settings and restore) as a JSON object's
// text, {"mode": "two_layers", "zoom": 4.0, ...}: what a session file keeps of a view and
// what a command-line flag or another view hands it. Reading is all or nothing: a view
// reads into a copy of its settings and keeps them only when every field was as expected.

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace headscope::session {

class SettingsReader {
public:
    // Not an object: the error says so, and every read leaves its value alone.
    explicit SettingsReader(const std::string& text);
    ~SettingsReader();
    SettingsReader(const SettingsReader&) = delete;
    SettingsReader& operator=(const SettingsReader&) = delete;

    // Each reads `key` when the object has it (left out: `into` stays as it is). A value
    // of another type or outside [low, high] is the error, naming the key; after the
    // first error nothing more is read.
    void read(const char* key, bool& into);
    void read(const char* key, int& into, int low, int high);
    void read(const char* key, float& into, float low, float high);
    void read(const char* key, double& into, double low, double high);
    void read(const char* key, std::string& into);
    // One of a list of names ("two_layers"), each standing for a value.
    template <typename Choice>
    void read(const char* key, Choice& into, std::initializer_list<std::pair<std::string_view, Choice>> names) {
        if (!has(key)) return;
        std::string name;
        read(key, name);
        if (!ok()) return;
        std::string expected;
        for (const auto& [known, value] : names) {
            if (known == name) {
                into = value;
                return;
            }
            expected += expected.empty() ? "" : ", ";
            expected += known;
        }
        fail(key, "expected one of " + expected);
    }

    bool ok() const { return error_.empty(); }
    // Why the text was not read: "'mode': expected one of two_heads, ..."; empty when it was.
    const std::string& error() const { return error_; }

private:
    struct Parsed;
    bool has(const char* key) const;   // present, and no error before it
    void fail(const char* key, const std::string& why);
    std::unique_ptr<Parsed> parsed_;
    std::string error_;
};

class SettingsWriter {
public:
    SettingsWriter();
    ~SettingsWriter();
    SettingsWriter(const SettingsWriter&) = delete;
    SettingsWriter& operator=(const SettingsWriter&) = delete;

    SettingsWriter& set(const char* key, bool value);
    SettingsWriter& set(const char* key, int value);
    SettingsWriter& set(const char* key, double value);
    SettingsWriter& set(const char* key, const std::string& value);
    SettingsWriter& set(const char* key, const char* value) { return set(key, std::string(value)); }
    // The object's text (keys sorted).
    std::string text() const;

private:
    struct Object;
    std::unique_ptr<Object> object_;
};

// Reads `text` into a copy of `into` (`read(reader, copy)`) and keeps the copy only when
// every field was as expected: empty, else why (and `into` is as it was).
template <typename Settings, typename Read>
std::string read_settings(const std::string& text, Settings& into, Read&& read) {
    SettingsReader in(text);
    Settings next = into;
    read(in, next);
    if (in.ok()) into = std::move(next);
    return in.error();
}

// `patch`'s fields over `base`'s (a JSON merge patch: the fields it names replace
// those; the rest stay). Either not an object: throws headscope::Error naming `label`.
std::string merge_settings(const std::string& base, const std::string& patch, const std::string& label);

}   // namespace headscope::session
