#pragma once
// JSON from files people hand us, parsed in one linear pass. nlohmann's own parse accepts
// things it should not (a NUL byte ends its input silently; a key given twice keeps the
// last value), and its callback parser, the usual way to add a depth guard, rescans each
// container after every child, which goes quadratic. This reads through nlohmann's SAX
// interface into the same DOM, counting depth and entries as it goes, and refuses: a NUL
// byte, anything after the value, a key given twice (naming it and where), nesting deeper
// than the limit, and a container with more entries than the limit.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace headscope {

struct JsonLimits {
    std::uintmax_t max_bytes = 64u << 20;   // of the file, checked before it is read
    std::size_t max_depth = 64;             // objects and arrays inside one another
    std::size_t max_entries = 4'000'000;    // in one object or array
};

// A large container handed over entry by entry instead of kept in the DOM (a vocabulary of
// 150,000 tokens would cost more to build as a tree than to read). `path` names it as
// messages do ("model.vocab"); `take(entry)` gets each entry in order. The container
// itself stays in the DOM, empty.
struct JsonEntry {
    bool in_object = false;
    std::string key;         // in an object
    std::size_t index = 0;   // in an array
    nlohmann::json value;
};
struct JsonStream {
    std::string path;
    std::function<void(JsonEntry&& entry)> take;
};

// The value `text` holds. `label` names the source in messages ("config.json"):
//   "<label>: key \"x\" is given twice in model.vocab"
//   "<label>: NUL byte at offset 17 (JSON text has none)"
nlohmann::json parse_json_text(std::string_view text, const std::string& label, const JsonLimits& limits = {},
                               const std::vector<JsonStream>& streams = {});

// The file's value, read whole (read_file_bytes: `what` names the kind of file).
nlohmann::json read_json_file(const std::string& path, std::string_view what, const JsonLimits& limits = {},
                              const std::vector<JsonStream>& streams = {});

// Where a value sits, as messages name it: "model.vocab", "added_tokens[3].content".
std::string json_child_path(const std::string& parent, std::string_view key);
std::string json_child_path(const std::string& parent, std::size_t index);

}   // namespace headscope
