#include "core/base/error.h"
#include "core/text/text.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace headscope;

namespace {

std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    for (const auto& t : tokenize_words(text)) out.push_back(t.text);
    return out;
}

}   // namespace

TEST_CASE("demo tokenizer: words and punctuation, whitespace runs collapse") {
    CHECK(words("The cat sat.") == std::vector<std::string>{"The", "cat", "sat", "."});
    CHECK(words("  Hello,\t\tworld!!\n\nBye ") == std::vector<std::string>{"Hello", ",", "world", "!", "!", "Bye"});
    CHECK(words("don't stop-now...") == std::vector<std::string>{"don", "'", "t", "stop", "-", "now", ".", ".", "."});
    CHECK(words("x_1 = 42") == std::vector<std::string>{"x_1", "=", "42"});
    CHECK(words("").empty());
    CHECK(words(" \t\n ").empty());
}

TEST_CASE("demo tokenizer: accents, combining marks, CJK and emoji stay intact") {
    CHECK(words("Café naïve") == std::vector<std::string>{"Café", "naïve"});
    // 'e' + COMBINING ACUTE ACCENT (U+0301) is one letter.
    CHECK(words("Cafe\xCC\x81 ok") == std::vector<std::string>{"Cafe\xCC\x81", "ok"});
    CHECK(words("我爱猫。") == std::vector<std::string>{"我", "爱", "猫", "。"});
    CHECK(words("ひらがな") == std::vector<std::string>{"ひらがな"});   // kana are letters: one word
    CHECK(words("hi👋🏽there") == std::vector<std::string>{"hi", "👋🏽", "there"});
    // A ZWJ family and a flag are single graphemes.
    CHECK(words("👨‍👩‍👧 🇫🇷") == std::vector<std::string>{"👨‍👩‍👧", "🇫🇷"});
    CHECK(words("«Привет» — мир") == std::vector<std::string>{"«", "Привет", "»", "—", "мир"});
}

TEST_CASE("demo tokenizer: byte spans point back into the text, and no byte is dropped") {
    const std::string text = "  Café, 猫!\n👋🏽 x";
    const auto tokens = tokenize_words(text);
    std::string non_space;
    for (const auto& t : tokens) {
        CHECK(text.substr(t.begin, t.end - t.begin) == t.text);
        non_space += t.text;
    }
    std::string expected;
    for (char c : text) {
        if (c != ' ' && c != '\n') expected += c;
    }
    CHECK(non_space == expected);
    CHECK(tokens[0].begin == 2);
}

TEST_CASE("demo tokenizer: invalid UTF-8 is an error naming the byte") {
    CHECK_THROWS_WITH_AS(tokenize_words("ok \xff bad", "sentence"), "sentence: invalid UTF-8 at byte 3", Error);
    CHECK_THROWS_AS(tokenize_words("\xC3"), Error);               // truncated sequence
    CHECK_THROWS_AS(tokenize_words("\xC0\xAF"), Error);           // overlong '/'
    CHECK_THROWS_AS(tokenize_words("\xED\xA0\x80"), Error);       // surrogate U+D800
    CHECK_THROWS_AS(tokenize_words("\xF4\x90\x80\x80"), Error);   // past U+10FFFF
    CHECK_NOTHROW(validate_utf8("plain ascii and ünïcödé", "x"));
}

TEST_CASE("demo tokenizer: control bytes other than whitespace are kept as tokens") {
    const std::string with_nul("a\0b", 3);
    CHECK(words(with_nul) == std::vector<std::string>{"a", std::string("\0", 1), "b"});
}
