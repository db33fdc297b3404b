#pragma once
// docs/errors.md, the catalogue of bad inputs, as a test: every numbered row's command
// is run and what the user sees (exit status, stderr) must be the row's text exactly.
// So the catalogue cannot drift from the program: change a message and the doc with it.
//
// A row: | # | input | what is wrong | `command` | exit | `message` |
// Commands start with headscope-cli (run directly) or headscope (the GUI, run under
// xvfb-run). Placeholders in a command:
//   {src}        the source tree            {tmp}   a fresh folder for this row
//   {out}        {tmp}/out.safetensors, pre-filled: a failing row must leave it as it was
//   {hex:ff 00}  those raw bytes (for invalid UTF-8 on the command line)
//   {chars:N}    a sentence of exactly N characters
//   {unreadable} a file in {tmp} nobody may read;  {readonly} a folder in {tmp} nobody may write
//   {fifo}       a named pipe in {tmp} called pipe.png (reading it would block for ever)
//   {loop}       a symlink in {tmp} called loop that points at itself
//   {wordfile:N} {tmp}/word.txt, written: one word of N letters (no space to split at; past
//                what a command line may hold)
// Rows with {unreadable} or {readonly} run as user nobody when the tests run as root
// (root reads and writes through permissions).

#include "cli/cli_runner.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace headscope::test {

struct CatalogueRow {
    int number = 0;
    std::string input;
    std::string problem;
    std::string command;   // as written, placeholders and all
    int exit_code = 0;
    std::string message;   // stderr's one line, without its line end
};

inline std::string strip(std::string s) {
    const auto first = s.find_first_not_of(' ');
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

// The text inside a cell's backticks (markdown escapes `\|` undone).
inline std::string code_of(const std::string& cell) {
    std::string c = strip(cell);
    if (c.size() >= 2 && c.front() == '`' && c.back() == '`') c = c.substr(1, c.size() - 2);
    std::string out;
    for (std::size_t i = 0; i < c.size(); ++i) {
        if (c[i] == '\\' && i + 1 < c.size() && c[i + 1] == '|') continue;
        out += c[i];
    }
    return out;
}

inline std::vector<CatalogueRow> read_catalogue(const std::string& path) {
    std::ifstream in(path);
    REQUIRE_MESSAGE(in, "cannot read " << path);
    std::vector<CatalogueRow> rows;
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() < 3 || line[0] != '|' || !std::isdigit(static_cast<unsigned char>(strip(line.substr(1))[0]))) {
            continue;
        }
        std::vector<std::string> cells;
        std::string cell;
        for (std::size_t i = 1; i < line.size(); ++i) {
            if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
                cell += "\\|";
                ++i;
            } else if (line[i] == '|') {
                cells.push_back(cell);
                cell.clear();
            } else {
                cell += line[i];
            }
        }
        REQUIRE_MESSAGE(cells.size() == 6, "docs/errors.md: a row needs 6 cells: " << line);
        CatalogueRow row;
        row.number = std::stoi(strip(cells[0]));
        row.input = strip(cells[1]);
        row.problem = strip(cells[2]);
        row.command = code_of(cells[3]);
        row.exit_code = std::stoi(strip(cells[4]));
        row.message = code_of(cells[5]);
        rows.push_back(row);
    }
    return rows;
}

inline bool is_gui_row(const CatalogueRow& row) { return row.command.rfind("headscope ", 0) == 0; }

// `text` with its placeholders replaced (commands and messages both hold them). In a
// message, braces that name no placeholder are the message's own ("{on,off}").
inline std::string expand_placeholders(const std::string& text, const TempDir& dir, bool in_message = false) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const auto close = text.find('}', i);
        if (text[i] != '{' || close == std::string::npos) {
            out += text[i++];
            continue;
        }
        const std::string name = text.substr(i + 1, close - i - 1);
        i = close + 1;
        if (name == "src")
            out += HEADSCOPE_SOURCE_DIR;
        else if (name == "tmp")
            out += dir.path().string();
        else if (name == "out")
            out += dir.file("out.safetensors");
        else if (name == "unreadable")
            out += dir.file("unreadable");
        else if (name == "readonly")
            out += dir.file("readonly");
        else if (name == "fifo")
            out += dir.file("pipe.png");
        else if (name == "loop")
            out += dir.file("loop");
        else if (name.rfind("wordfile:", 0) == 0) {
            if (!in_message) write_bytes(dir.file("word.txt"), std::string(std::stoul(name.substr(9)), 'a'));
            out += dir.file("word.txt");
        } else if (name.rfind("hex:", 0) == 0) {
            std::istringstream hex(name.substr(4));
            for (std::string byte; hex >> byte;) out += static_cast<char>(std::stoi(byte, nullptr, 16));
        } else if (name.rfind("chars:", 0) == 0) {
            const std::size_t n = std::stoul(name.substr(6));
            const std::string phrase = "the cat sat on the mat and looked at the door. ";
            std::string sentence;
            while (sentence.size() < n) sentence += phrase;
            sentence.resize(n);
            out += sentence;
        } else if (in_message) {
            out += "{" + name + "}";
        } else {
            FAIL("docs/errors.md: unknown placeholder {" << name << "}");
        }
    }
    return out;
}

// The command's words, quotes ("...") grouping, placeholders expanded.
inline std::vector<std::string> expand_command(const std::string& command, const TempDir& dir) {
    std::vector<std::string> words;
    std::string word;
    bool quoted = false;
    bool in_word = false;
    for (char c : command) {
        if (c == '"') {
            quoted = !quoted;
            in_word = true;
        } else if (c == ' ' && !quoted) {
            if (in_word) words.push_back(expand_placeholders(word, dir));
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(expand_placeholders(word, dir));
    return words;
}

// Every row runs within the budget #31 promises for any bad input: 10 s, and for
// headscope-cli 1 GB of address space (`ulimit -v`), killed past either. Not under
// AddressSanitizer, which maps terabytes of shadow memory before main.
constexpr int catalogue_seconds = 10;
constexpr long catalogue_address_space_kib = 1L << 20;

inline bool needs_unprivileged(const CatalogueRow& row) {
    return row.command.find("{unreadable}") != std::string::npos || row.command.find("{readonly}") != std::string::npos;
}

// Runs one row and checks what the user sees, and that a failure left {out} alone and
// nothing else behind.
inline void check_catalogue_row(const CatalogueRow& row) {
    CAPTURE(row.number);
    CAPTURE(row.command);
    TempDir dir;
    std::filesystem::permissions(dir.path(), std::filesystem::perms::all);   // open to nobody too
    const std::string before = "what the user had before";
    write_bytes(dir.file("out.safetensors"), before);
    write_bytes(dir.file("unreadable"), "The cat sat.");
    std::filesystem::permissions(dir.file("unreadable"), std::filesystem::perms::none);
    std::filesystem::create_directory(dir.file("readonly"));
    std::filesystem::permissions(dir.file("readonly"),
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec |
                                     std::filesystem::perms::group_read | std::filesystem::perms::group_exec |
                                     std::filesystem::perms::others_read | std::filesystem::perms::others_exec);
    REQUIRE(mkfifo(dir.file("pipe.png").c_str(), 0666) == 0);
    std::filesystem::create_symlink(dir.file("loop"), dir.file("loop"));
    std::vector<std::string> words = expand_command(row.command, dir);
    REQUIRE(!words.empty());
    const std::string name = words[0];
    words.erase(words.begin());
    std::string program;
    // xvfb-run's X authority file: beside `dir`, whose contents a failed run is checked
    // against, and writable by the unprivileged user some rows run as.
    const TempDir auth_dir;
    std::filesystem::permissions(auth_dir.path(), std::filesystem::perms::all);
    if (name == "headscope-cli") {
        program = HEADSCOPE_CLI;
    } else {
#ifdef HEADSCOPE_GUI
        // The GUI reports what its banner shows on stderr when taking a screenshot.
        std::vector<std::string> xvfb = xvfb_run_words(auth_dir);
        program = xvfb.front();
        xvfb.erase(xvfb.begin());
        xvfb.push_back(HEADSCOPE_GUI);
        words.insert(words.begin(), xvfb.begin(), xvfb.end());
        words.push_back("--screenshot");
        words.push_back(dir.file("shot.png"));
#else
        FAIL("GUI rows run from the GUI tests");
#endif
    }
    if (needs_unprivileged(row) && geteuid() == 0) {
        words.insert(words.begin(), {"--reuid=65534", "--regid=65534", "--clear-groups", "--", program});
        program = "setpriv";
    }
    std::string command = shell_quote(program);
    for (const auto& w : words) command.append(" ").append(shell_quote(w));
    const bool budget = !sanitized_build();
    // The window's rows get the time limit only (Mesa maps more address space than a
    // gigabyte before the first frame, whatever the input), stopped by SIGTERM so that
    // xvfb-run takes its X server down with it (exit 124).
    std::string time_limit = budget ? "timeout " : "";
    if (budget && name == "headscope-cli") time_limit.append("-s KILL ");
    if (budget) time_limit.append(std::to_string(catalogue_seconds)).append(" ");
    command.insert(0, time_limit);
    command += " >" + shell_quote(dir.file("stdout")) + " 2>" + shell_quote(dir.file("stderr")) + " </dev/null";
    const std::string home =
        "HOME=" + shell_quote(dir.path().string()) + " XDG_CONFIG_HOME=" + shell_quote(dir.file("config")) + " ";
    std::string address_limit;
    if (budget && name == "headscope-cli") {
        address_limit.append("ulimit -v ").append(std::to_string(catalogue_address_space_kib)).append(" && ");
    }
    const int exit_code = run_command(address_limit + home + command, dir.file("stderr"));
    // Everything the run printed, for a failure's report: what is filtered out below can
    // say why it failed (a sanitizer's report, xvfb-run's note).
    const std::string printed = read_bytes(dir.file("stderr"));
    CAPTURE(printed);
    std::string err = printed;
    // xvfb-run may add its own notes; the GUI's own lines start with "headscope:".
    if (program == "xvfb-run") {
        std::istringstream lines(err);
        std::string kept;
        for (std::string l; std::getline(lines, l);) {
            if (l.rfind("headscope", 0) == 0) kept += l + "\n";
        }
        err = kept;
    }
    CHECK_MESSAGE(!(budget && (exit_code == 128 + SIGKILL || exit_code == 124)),
                  "stopped: past " << catalogue_seconds << " s or 1 GB");
    CHECK(exit_code == row.exit_code);
    CHECK(err == expand_placeholders(row.message, dir, true) + "\n");
    if (row.exit_code != 0) {
        CHECK_MESSAGE(read_bytes(dir.file("out.safetensors")) == before, "a failed run changed the output file");
        for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
            const std::string name = entry.path().filename().string();
            const bool ours = name == "out.safetensors" || name == "unreadable" || name == "readonly" ||
                              name == "stdout" || name == "stderr" || name == "config" || name == "shot.png" ||
                              name == "pipe.png" || name == "loop" || name == "word.txt";
            CHECK_MESSAGE(ours, "a failed run left " << name << " behind");
        }
    }
}

}   // namespace headscope::test
