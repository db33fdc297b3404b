#include "core/text/tokenizer/decoders.h"

#include "core/text/tokenizer/byte_level.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <utf8proc.h>

#include <cstdio>
#include <optional>

namespace headscope::tokenizer {

namespace {

using Mode = Decoder::Mode;

// The byte a "<0xE2>" token stands for.
std::optional<unsigned char> fallback_byte(std::string_view token) {
    if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return std::nullopt;
    unsigned value = 0;
    for (std::size_t i = 3; i < 5; ++i) {
        const char c = token[i];
        const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit < 0) return std::nullopt;
        value = value * 16 + static_cast<unsigned>(digit);
    }
    return static_cast<unsigned char>(value);
}

// The length of the UTF-8 character at `at`, or 0 where the bytes there are not one.
std::size_t utf8_length_at(std::string_view bytes, std::size_t at, utf8proc_int32_t& c) {
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(bytes.data()) + at,
                                    static_cast<utf8proc_ssize_t>(bytes.size() - at), &c);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
}

bool is_valid_utf8(std::string_view bytes) {
    utf8proc_int32_t c = 0;
    for (std::size_t at = 0; at < bytes.size();) {
        const std::size_t n = utf8_length_at(bytes, at, c);
        if (n == 0) return false;
        at += n;
    }
    return true;
}

// Invalid UTF-8 as U+FFFD, one per bad byte (Rust's from_utf8_lossy, close enough for reading).
std::string lossy_utf8(std::string_view bytes) {
    std::string out;
    utf8proc_int32_t c = 0;
    for (std::size_t at = 0; at < bytes.size();) {
        const std::size_t n = utf8_length_at(bytes, at, c);
        out.append(n == 0 ? std::string_view("\xEF\xBF\xBD") : bytes.substr(at, n));
        at += n == 0 ? 1 : n;
    }
    return out;
}

class ByteLevelDecoder : public Decoder {
public:
    bool apply(std::vector<std::string>& tokens, Mode mode) const override {
        for (std::string& token : tokens) {
            std::string bytes;
            for (std::size_t at = 0; at < token.size();) {
                const DecodedChar d = decode_char(token, at);
                if (const auto byte = byte_level_byte(d.c)) {
                    bytes += static_cast<char>(*byte);
                } else {
                    bytes.append(token, at, d.length);
                }
                at += d.length;
            }
            token = std::move(bytes);
        }
        if (mode == Mode::text) {
            std::string joined;
            for (const std::string& token : tokens) joined += token;
            tokens = {lossy_utf8(joined)};
        }
        return true;
    }
};

class MetaspaceDecoder : public Decoder {
public:
    MetaspaceDecoder(std::string replacement, bool strip_first)
        : replacement_(std::move(replacement)), strip_first_(strip_first) {}
    bool apply(std::vector<std::string>& tokens, Mode mode) const override {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            std::string& token = tokens[i];
            std::string out;
            for (std::size_t at = 0; at < token.size();) {
                if (token.compare(at, replacement_.size(), replacement_) == 0) {
                    if (!(mode == Mode::text && i == 0 && at == 0 && strip_first_)) out += ' ';
                    at += replacement_.size();
                } else {
                    out += token[at++];
                }
            }
            token = std::move(out);
        }
        return true;
    }

private:
    std::string replacement_;
    bool strip_first_;
};

class ByteFallbackDecoder : public Decoder {
public:
    bool apply(std::vector<std::string>& tokens, Mode mode) const override {
        if (mode == Mode::labels) {   // each <0xNN> its byte; labels join the runs
            for (std::string& token : tokens) {
                if (const auto byte = fallback_byte(token)) token = std::string(1, static_cast<char>(*byte));
            }
            return true;
        }
        std::vector<std::string> out;
        std::string run;
        std::size_t run_tokens = 0;
        const auto flush = [&] {
            if (run_tokens == 0) return;
            if (is_valid_utf8(run)) {
                out.push_back(run);
                out.insert(out.end(), run_tokens - 1, std::string());
            } else {
                for (std::size_t k = 0; k < run_tokens; ++k) out.push_back("\xEF\xBF\xBD");
            }
            run.clear();
            run_tokens = 0;
        };
        for (std::string& token : tokens) {
            if (const auto byte = fallback_byte(token)) {
                run += static_cast<char>(*byte);
                ++run_tokens;
            } else {
                flush();
                out.push_back(std::move(token));
            }
        }
        flush();
        tokens = std::move(out);
        return true;
    }
};

class ReplaceDecoder : public Decoder {
public:
    ReplaceDecoder(SplitPattern pattern, std::string content)
        : pattern_(std::move(pattern)), content_(std::move(content)) {}
    bool apply(std::vector<std::string>& tokens, Mode) const override {
        for (std::string& token : tokens) {
            if (!is_valid_utf8(token)) continue;
            std::string out;
            std::size_t at = 0;
            for (const auto& [begin, end] : pattern_.find_all(token)) {
                out.append(token, at, begin - at);
                out += content_;
                at = end;
            }
            out.append(token, at);
            token = std::move(out);
        }
        return true;
    }

private:
    SplitPattern pattern_;
    std::string content_;
};

class FuseDecoder : public Decoder {
public:
    bool apply(std::vector<std::string>& tokens, Mode mode) const override {
        if (mode == Mode::labels) return false;
        std::string joined;
        for (const std::string& token : tokens) joined += token;
        tokens = {joined};
        return true;
    }
};

class StripDecoder : public Decoder {
public:
    StripDecoder(std::string content, std::size_t start, std::size_t stop)
        : content_(std::move(content)), start_(start), stop_(stop) {}
    bool apply(std::vector<std::string>& tokens, Mode) const override {
        for (std::string& token : tokens) {
            for (std::size_t k = 0; k < start_ && token.starts_with(content_); ++k) token.erase(0, content_.size());
            for (std::size_t k = 0; k < stop_ && token.ends_with(content_); ++k)
                token.resize(token.size() - content_.size());
        }
        return true;
    }

private:
    std::string content_;
    std::size_t start_, stop_;
};

class WordPieceDecoder : public Decoder {
public:
    WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
    bool apply(std::vector<std::string>& tokens, Mode mode) const override {
        if (mode == Mode::labels) return true;   // labels keep the vocabulary's form, "##ing"
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            std::string& token = tokens[i];
            if (i > 0) {
                if (token.starts_with(prefix_)) {
                    token.erase(0, prefix_.size());
                } else {
                    token.insert(token.begin(), ' ');
                }
            }
            if (cleanup_) token = cleanup(token);
        }
        return true;
    }

private:
    static std::string cleanup(std::string text) {
        for (const auto& [from, to] : {std::pair{" .", "."},
                                       {" ?", "?"},
                                       {" !", "!"},
                                       {" ,", ","},
                                       {" ' ", "'"},
                                       {" n't", "n't"},
                                       {" 'm", "'m"},
                                       {" do not", " don't"},
                                       {" 's", "'s"},
                                       {" 've", "'ve"},
                                       {" 're", "'re"}}) {
            std::string out;
            const std::string_view f = from;
            for (std::size_t at = 0; at < text.size();) {
                if (text.compare(at, f.size(), f) == 0) {
                    out += to;
                    at += f.size();
                } else {
                    out += text[at++];
                }
            }
            text = std::move(out);
        }
        return text;
    }

    std::string prefix_;
    bool cleanup_;
};

class SequenceDecoder : public Decoder {
public:
    explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
    bool apply(std::vector<std::string>& tokens, Mode mode) const override {
        for (const auto& step : steps_) {
            if (!step->apply(tokens, mode)) return false;
        }
        return true;
    }

private:
    std::vector<std::unique_ptr<Decoder>> steps_;
};

SplitPattern read_decoder_pattern(const JsonField& field) {
    if (const auto regex = field.find("Regex"))
        return SplitPattern::regex(regex->string(), regex->file() + ": " + regex->path());
    if (const auto literal = field.find("String")) return SplitPattern::literal(literal->string());
    field.expected("{\"String\": ...} or {\"Regex\": ...}");
}

std::string escape_byte(unsigned value, int digits, const char* prefix) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%s%0*x", prefix, digits, value);
    return buffer;
}

}   // namespace

std::string readable_bytes(std::string_view bytes) {
    std::string out;
    utf8proc_int32_t c = 0;
    for (std::size_t at = 0; at < bytes.size();) {
        const std::size_t n = utf8_length_at(bytes, at, c);
        if (n == 0) {
            out += escape_byte(static_cast<unsigned char>(bytes[at]), 2, "\\x");
            ++at;
            continue;
        }
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7F) {
            out += escape_byte(static_cast<unsigned>(c), 2, "\\x");
        } else if (c >= 0x80 && c < 0xA0) {
            out += escape_byte(static_cast<unsigned>(c), 4, "\\u");   // C1 controls, e.g. NEL \u0085
        } else {
            out.append(bytes.substr(at, n));
        }
        at += n;
    }
    return out;
}

std::unique_ptr<Decoder> make_byte_level_decoder() { return std::make_unique<ByteLevelDecoder>(); }

std::unique_ptr<Decoder> make_wordpiece_decoder(const std::string& prefix, bool cleanup) {
    return std::make_unique<WordPieceDecoder>(prefix, cleanup);
}

std::unique_ptr<Decoder> read_decoder(const JsonField& field) {
    const std::string type = field.type();
    if (type == "ByteLevel") return make_byte_level_decoder();
    if (type == "Metaspace") {
        const std::string scheme = field.string_or("prepend_scheme", "always");
        return std::make_unique<MetaspaceDecoder>(field.string_or("replacement", "\u2581"),
                                                  scheme != "never" && field.bool_or("add_prefix_space", true));
    }
    if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
    if (type == "Replace")
        return std::make_unique<ReplaceDecoder>(read_decoder_pattern(field.at("pattern")),
                                                field.at("content").string());
    if (type == "Fuse") return std::make_unique<FuseDecoder>();
    if (type == "Strip") {
        return std::make_unique<StripDecoder>(field.string_or("content", " "),
                                              static_cast<std::size_t>(field.at("start").integer(0, 1'000'000)),
                                              static_cast<std::size_t>(field.at("stop").integer(0, 1'000'000)));
    }
    if (type == "WordPiece")
        return std::make_unique<WordPieceDecoder>(field.string_or("prefix", "##"), field.bool_or("cleanup", true));
    if (type == "Sequence") return std::make_unique<SequenceDecoder>(read_each(field, "decoders", read_decoder));
    field.at("type").fail("\"" + type +
                          "\" is not a decoder this reader knows (ByteLevel, Metaspace, ByteFallback, "
                          "Replace, Fuse, Strip, WordPiece, Sequence)");
}

std::vector<std::string> decode_labels(const Decoder* decoder, std::vector<std::string> tokens) {
    if (decoder != nullptr) decoder->apply(tokens, Decoder::Mode::labels);
    std::vector<std::string> labels(tokens.size());
    for (std::size_t i = 0; i < tokens.size();) {
        if (is_valid_utf8(tokens[i])) {
            labels[i] = readable_bytes(tokens[i]);
            ++i;
            continue;
        }
        // A run of tokens that end inside a character, joined until they spell whole
        // characters (at most 4 tokens), shows that text at each of its positions.
        std::string run = tokens[i];
        std::size_t end = i + 1;
        while (end < tokens.size() && end - i < 4 && !is_valid_utf8(run)) run += tokens[end++];
        if (is_valid_utf8(run) && end - i > 1) {
            for (std::size_t k = i; k < end; ++k) labels[k] = readable_bytes(run);
            i = end;
        } else {
            labels[i] = readable_bytes(tokens[i]);
            ++i;
        }
    }
    return labels;
}

std::string decode_text(const Decoder* decoder, std::vector<std::string> tokens) {
    if (decoder != nullptr) decoder->apply(tokens, Decoder::Mode::text);
    std::string joined;
    for (const std::string& token : tokens) joined += token;
    return lossy_utf8(joined);
}

}   // namespace headscope::tokenizer
