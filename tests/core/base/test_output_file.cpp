// The one writer (core/base/output_file.h): what it refuses before any work, what it
// writes through, and that every input's bytes are the same after each refusal.
#include "core/base/error.h"
#include "core/base/output_file.h"
#include "core/base/shown.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

using namespace headscope;
using headscope::test::read_bytes;
using headscope::test::TempDir;
using headscope::test::write_bytes;
namespace fs = std::filesystem;

namespace {

void write_text(const std::string& path, const std::string& text) {
    write_file_atomically(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

std::string refusal(const std::string& out, const std::vector<InputPath>& inputs) {
    try {
        check_output("--out", out, inputs);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

// A model folder as the loaders read it, and its bytes, to compare after each refusal.
struct ModelFolder {
    explicit ModelFolder(const TempDir& dir) : path(dir.file("model")) {
        fs::create_directory(path);
        write_bytes(path + "/config.json", "{\"model_type\": \"gpt2\"}");
        write_bytes(path + "/model.safetensors", std::string(64, '\x01'));
        write_bytes(dir.file("text.txt"), "The cat sat.");
    }
    std::vector<std::string> bytes() const {
        return {read_bytes(path + "/config.json"), read_bytes(path + "/model.safetensors")};
    }
    std::string path;
};

}   // namespace

TEST_CASE("output_file: an output that is an input, by any name, is refused before any work") {
    TempDir dir;
    const ModelFolder model(dir);
    const auto before = model.bytes();
    const std::string text = dir.file("text.txt");
    const std::vector<InputPath> inputs = {{"--model", model.path, true}, {"--text-file", text, false}};

    CHECK(refusal(text, inputs) ==
          "--out " + text + ": is the same file as --text-file " + text + "; writing it would destroy that input");
    fs::create_hard_link(text, dir.file("hard"));
    CHECK(refusal(dir.file("hard"), inputs).find(": is the same file as --text-file") != std::string::npos);
    fs::create_symlink(text, dir.file("soft"));
    CHECK(refusal(dir.file("soft"), inputs).find(": is the same file as --text-file") != std::string::npos);
    // Inside the model folder, existing or not, and reached through a link to the folder.
    CHECK(refusal(model.path + "/model.safetensors", inputs)
              .find(": is the same file as " + model.path + "/model.safetensors of --model") != std::string::npos);
    CHECK(refusal(model.path + "/new.png", inputs) == "--out " + model.path + "/new.png: lies inside --model " +
                                                          model.path + ", which is being read; write it elsewhere");
    fs::create_directory_symlink(model.path, dir.file("model-link"));
    CHECK(refusal(dir.file("model-link") + "/x.png", inputs).find(": lies inside --model") != std::string::npos);
    // A model file that is a link into a cache elsewhere (Hugging Face's snapshot layout).
    write_bytes(dir.file("blob"), "weights");
    fs::create_symlink(dir.file("blob"), model.path + "/pytorch_model.bin");
    CHECK(refusal(dir.file("blob"), inputs)
              .find(": is the same file as " + model.path + "/pytorch_model.bin of --model") != std::string::npos);

    CHECK(model.bytes() == before);
    CHECK(read_bytes(text) == "The cat sat.");
    CHECK(refusal(dir.file("elsewhere.png"), inputs).empty());
    CHECK(refusal(dir.file("elsewhere.png"), {{"--text-file", dir.file("missing.txt"), false}}).empty());
}

TEST_CASE("output_file: only a regular file, or a link to one, is ever replaced") {
    TempDir dir;
    REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0644) == 0);
    CHECK(refusal(dir.file("fifo"), {}) ==
          "--out " + dir.file("fifo") + ": is a FIFO; expected a regular file (or a link to one) to write");
    CHECK_THROWS_WITH_AS(
        write_text(dir.file("fifo"), "x"),
        (dir.file("fifo") + ": is a FIFO; expected a regular file (or a link to one) to write").c_str(), Error);
    CHECK(fs::is_fifo(dir.file("fifo")));

    fs::create_directory(dir.file("folder"));
    CHECK(refusal(dir.file("folder"), {}).find(": is a directory; expected a regular file") != std::string::npos);
    CHECK_THROWS_AS(write_text(dir.file("folder"), "x"), Error);
    CHECK(fs::is_directory(dir.file("folder")));

    // A socket, as a running program leaves one.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string socket_path = dir.file("sock");
    REQUIRE(socket_path.size() < sizeof address.sun_path);
    socket_path.copy(address.sun_path, socket_path.size());
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    CHECK(refusal(socket_path, {}).find(": is a socket;") != std::string::npos);
    ::close(fd);

    // /dev/null-like nodes, made here: the writer must never replace the real ones.
    const std::string null_like = dir.file("null"), disk_like = dir.file("disk");
    if (::mknod(null_like.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        CHECK(refusal(null_like, {}).find(": is a character device;") != std::string::npos);
        CHECK_THROWS_AS(write_text(null_like, "x"), Error);
        CHECK(fs::is_character_file(null_like));
        REQUIRE(::mknod(disk_like.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0);
        CHECK(refusal(disk_like, {}).find(": is a block device;") != std::string::npos);
        // Through a link, the message names what the link reaches.
        fs::create_symlink(null_like, dir.file("to-null"));
        CHECK(refusal(dir.file("to-null"), {}) ==
              "--out " + dir.file("to-null") + ": links to " + null_like +
                  ", which is a character device; expected a regular file (or a link to one) to write");
    } else {
        MESSAGE("mknod needs CAP_MKNOD (errno " << errno << "): device nodes not tried");
    }
    CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("output_file: writing through a symlink replaces the file it names, keeping its permissions") {
    TempDir dir;
    write_bytes(dir.file("target.json"), "old");
    fs::permissions(dir.file("target.json"), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    fs::create_symlink("target.json", dir.file("link.json"));   // relative, as `ln -s` makes them
    write_text(dir.file("link.json"), "new");
    CHECK(fs::is_symlink(dir.file("link.json")));
    CHECK(read_bytes(dir.file("target.json")) == "new");
    CHECK(fs::status(dir.file("target.json")).permissions() ==
          (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
    // A link to a file not there yet creates it, as an editor does.
    fs::create_symlink(dir.file("later.json"), dir.file("dangling"));
    write_text(dir.file("dangling"), "made");
    CHECK(read_bytes(dir.file("later.json")) == "made");
    // Nothing is left beside the target.
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++files;
    CHECK(files == 4);

    fs::create_symlink(dir.file("loop-b"), dir.file("loop-a"));
    fs::create_symlink(dir.file("loop-a"), dir.file("loop-b"));
    CHECK(refusal(dir.file("loop-a"), {}) ==
          "--out " + dir.file("loop-a") + ": a loop of symlinks (more than 40 links followed)");
    CHECK_THROWS_AS(write_text(dir.file("loop-a"), "x"), Error);
}

TEST_CASE("shown: an echoed value stays one readable line") {
    CHECK(shown("model/config.json") == "model/config.json");
    CHECK(shown("a\nb\tc\vd\fe\x7f") == "a\\nb\\tc\\x0bd\\x0ce\\x7f");
    CHECK(shown("x\xE2\x80\xA8y\xC2\x85z") == "x\\u{2028}y\\u{0085}z");   // line separator, NEL
    CHECK(shown("caf\xC3\xA9 \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xF0\x9F\x98\x80");
    CHECK(shown("\xC3(\xED\xA0\x80") == "\\xc3(\\xed\\xa0\\x80");   // truncated, and a surrogate
    const std::string long_name(10'000'000, 'w');
    const std::string cut = shown(long_name);
    CHECK(cut == std::string(120, 'w') + "\xE2\x80\xA6 (9999880 more bytes)");
    CHECK(shown(std::string(120, 'w')) == std::string(120, 'w'));
}
