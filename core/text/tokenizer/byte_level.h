#pragma once
// GPT-2's bytes_to_unicode: every byte stands for a printable character, so byte-level
// vocabularies are written as text ("Ġ" is the space, "Ċ" the newline).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace headscope::tokenizer {

char32_t byte_level_char(std::uint8_t byte);
// The byte a character stands for; nullopt for characters that stand for none.
std::optional<std::uint8_t> byte_level_byte(char32_t c);
// The bytes a byte-level token spells, or nullopt when it holds another character.
std::optional<std::string> byte_level_bytes(std::string_view token);
// GPT-2's pre-tokenizer pattern, in Hugging Face's ByteLevel.
inline constexpr std::string_view gpt2_split_pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}   // namespace headscope::tokenizer
