#include "core/base/json_file.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace headscope {

namespace {

using json = nlohmann::json;

// Builds the DOM from SAX events. Each open container is a frame; its path is only
// spelled out when a message needs it, so parsing stays linear.
class DomBuilder : public nlohmann::json_sax<json> {
public:
    DomBuilder(json& root, const std::string& label, const JsonLimits& limits, const std::vector<JsonStream>& streams)
        : root_(root), label_(label), limits_(limits), streams_(streams) {
        // Frames point into one another (a streamed entry under construction): never reallocate.
        frames_.reserve(limits_.max_depth + 1);
    }

    bool null() override { return add(json(nullptr)); }
    bool boolean(bool value) override { return add(json(value)); }
    bool number_integer(number_integer_t value) override { return add(json(value)); }
    bool number_unsigned(number_unsigned_t value) override { return add(json(value)); }
    bool number_float(number_float_t value, const string_t&) override { return add(json(value)); }
    bool string(string_t& value) override { return add(json(std::move(value))); }
    bool binary(binary_t& value) override { return add(json::binary(std::move(value))); }

    bool start_object(std::size_t) override { return open(json::object()); }
    bool start_array(std::size_t) override { return open(json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }

    bool key(string_t& key) override {
        Frame& frame = frames_.back();
        count(frame);
        if (frame.stream == nullptr && frame.value->contains(key)) {
            throw Error(label_ + ": key \"" + key + "\" is given twice in " + path_of(frames_.size()));
        }
        frame.key = std::move(key);
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
        // nlohmann's reason, without its "[json.exception.parse_error.101] " tag: it names the
        // line and column, which a person can find in an editor.
        std::string what = e.what();
        if (what.starts_with("[json.exception.")) what = what.substr(what.find("] ") + 2);
        throw Error(label_ + ": not valid JSON (" + what + ")");
    }

private:
    struct Frame {
        json* value = nullptr;
        std::string key;   // the last key read, in an object
        std::size_t entries = 0;
        const JsonStream* stream = nullptr;   // entries go there, not into value
        json entry;                           // the entry being built, in a streamed container
    };

    std::string path_of(std::size_t depth) const {
        std::string path;
        for (std::size_t i = 0; i + 1 < depth; ++i) {
            const Frame& f = frames_[i];
            path = f.value->is_object() ? json_child_path(path, f.key) : json_child_path(path, f.entries - 1);
        }
        return path.empty() ? "the top level" : path;
    }

    void count(Frame& frame) {
        if (++frame.entries > limits_.max_entries) {
            throw Error(label_ + ": " + path_of(frames_.size()) + " has more than " +
                        std::to_string(limits_.max_entries) + " entries");
        }
    }

    // Places a value where the parser is: the root, the next array element, or under the last key.
    json* place(json&& value) {
        if (frames_.empty()) {
            root_ = std::move(value);
            return &root_;
        }
        Frame& frame = frames_.back();
        if (frame.stream != nullptr) {
            if (frame.value->is_array()) count(frame);
            frame.entry = std::move(value);
            return &frame.entry;
        }
        if (frame.value->is_array()) {
            count(frame);
            frame.value->push_back(std::move(value));
            return &frame.value->back();
        }
        return &((*frame.value)[frame.key] = std::move(value));
    }

    bool add(json&& value) {
        place(std::move(value));
        hand_over();
        return true;
    }

    // A finished entry of a streamed container goes to its stream.
    void hand_over() {
        if (frames_.empty() || frames_.back().stream == nullptr) return;
        Frame& frame = frames_.back();
        const bool in_object = frame.value->is_object();
        frame.stream->take(JsonEntry{in_object, in_object ? std::move(frame.key) : std::string(),
                                     in_object ? 0 : frame.entries - 1, std::move(frame.entry)});
        frame.entry = json();
    }

    const JsonStream* stream_at(const std::string& path) const {
        for (const JsonStream& stream : streams_) {
            if (stream.path == path) return &stream;
        }
        return nullptr;
    }

    bool open(json&& container) {
        if (frames_.size() >= limits_.max_depth) {
            throw Error(label_ + ": JSON nests deeper than " + std::to_string(limits_.max_depth) + " levels");
        }
        const bool in_stream = std::any_of(frames_.begin(), frames_.end(), [](const Frame& f) { return f.stream; });
        json* placed = place(std::move(container));
        // Only containers outside a stream, near the top, can be streamed: their path is short.
        const JsonStream* stream = nullptr;
        if (!streams_.empty() && !in_stream && frames_.size() < 4) stream = stream_at(path_of(frames_.size() + 1));
        frames_.push_back(Frame{placed, {}, 0, stream, json()});
        return true;
    }

    bool close() {
        frames_.pop_back();
        hand_over();
        return true;
    }

    json& root_;
    const std::string& label_;
    const JsonLimits& limits_;
    const std::vector<JsonStream>& streams_;
    std::vector<Frame> frames_;
};

}   // namespace

std::string json_child_path(const std::string& parent, std::string_view key) {
    return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string json_child_path(const std::string& parent, std::size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

json parse_json_text(std::string_view text, const std::string& label, const JsonLimits& limits,
                     const std::vector<JsonStream>& streams) {
    if (const void* nul = std::memchr(text.data(), '\0', text.size())) {
        const auto offset = static_cast<std::size_t>(static_cast<const char*>(nul) - text.data());
        throw Error(label + ": NUL byte at offset " + std::to_string(offset) + " (JSON text has none)");
    }
    json root;
    DomBuilder builder(root, label, limits, streams);
    json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true);
    return root;
}

json read_json_file(const std::string& path, std::string_view what, const JsonLimits& limits,
                    const std::vector<JsonStream>& streams) {
    return parse_json_text(read_file_bytes(path, limits.max_bytes, what), path, limits, streams);
}

}   // namespace headscope
