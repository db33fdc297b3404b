#include "core/base/error.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <sys/types.h>

using namespace headscope;
using headscope::test::TempDir;

namespace {

// The raw bytes of a safetensors file: 8-byte little-endian header length, header, data.
std::string with_header(const std::string& header, const std::string& data, std::uint64_t claimed_length) {
    std::string bytes(8, '\0');
    std::memcpy(bytes.data(), &claimed_length, 8);
    return bytes + header + data;
}
std::string with_header(const std::string& header, const std::string& data = std::string(16, '\x01')) {
    return with_header(header, data, header.size());
}

// Opening must fail with a headscope::Error whose message holds every one of `parts`.
void check_rejected(const std::string& path, std::initializer_list<std::string> parts) {
    try {
        SafetensorsFile::open(path);
        FAIL("opened a bad file: " << path);
    } catch (const Error& e) {
        const std::string message = e.what();
        INFO("message: " << message);
        CHECK(message.find('\n') == std::string::npos);
        CHECK(message.find(path) != std::string::npos);
        for (const auto& part : parts) CHECK_MESSAGE(message.find(part) != std::string::npos, "missing: " << part);
    }
}

}   // namespace

TEST_CASE("safetensors round trip keeps names, dtypes, shapes, values and metadata") {
    TempDir dir;
    const std::vector<float> a = {1.0f, -2.0f, 3.5f, 0.25f, 6.0f, -7.0f};
    const std::vector<std::int64_t> ids = {5, 0, -3};
    const std::vector<std::uint16_t> halves = {0x3c00, 0x4000};
    const std::vector<std::uint8_t> flags = {1, 0, 1, 1};
    const std::string path = dir.file("t.safetensors");
    write_safetensors(path,
                      {tensor_f32("a", {2, 3}, a),
                       tensor_i64("ids", {3}, ids),
                       {"h", DType::F16, {2}, std::as_bytes(std::span(halves))},
                       {"mask", DType::BOOL, {2, 2}, std::as_bytes(std::span(flags))},
                       tensor_f32("empty", {0, 4}, {})},
                      {{"tokens", R"(["a","b"])"}});

    const auto file = SafetensorsFile::open(path);
    CHECK(file.metadata().at("tokens") == R"(["a","b"])");
    REQUIRE(file.tensors().size() == 5);
    CHECK(file.get("a").shape == Shape{2, 3});
    CHECK(file.get("a").to_floats() == a);
    CHECK(file.get("ids").dtype == DType::I64);
    CHECK(file.get("ids").to_floats() == std::vector<float>{5.0f, 0.0f, -3.0f});
    CHECK(file.get("h").to_floats() == std::vector<float>{1.0f, 2.0f});
    CHECK(file.get("mask").to_floats() == std::vector<float>{1.0f, 0.0f, 1.0f, 1.0f});
    CHECK(file.get("empty").numel() == 0);
    const Matrix m = file.matrix("a");
    CHECK(m(1, 2) == -7.0f);
    CHECK_THROWS_AS(file.get("nope"), Error);

    // The data section starts 8-byte aligned, as the reference writer pads it.
    const std::string bytes = test::read_bytes(path);
    std::uint64_t header_length = 0;
    std::memcpy(&header_length, bytes.data(), 8);
    CHECK(header_length % 8 == 0);
}

TEST_CASE("safetensors writer refuses inconsistent tensors and leaves the target untouched") {
    TempDir dir;
    const std::string path = dir.file("out.safetensors");
    test::write_bytes(path, "previous content");
    const std::vector<float> three = {1, 2, 3};
    CHECK_THROWS_AS(write_safetensors(path, {tensor_f32("a", {2, 2}, three)}), Error);
    CHECK_THROWS_AS(write_safetensors(path, {tensor_f32("a", {3}, three), tensor_f32("a", {3}, three)}), Error);
    CHECK(test::read_bytes(path) == "previous content");
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);   // no temp file left

    CHECK_THROWS_WITH_AS(write_safetensors(dir.file("missing/out.safetensors"), {tensor_f32("a", {3}, three)}),
                         doctest::Contains("does not exist"), Error);
    CHECK_THROWS_WITH_AS(write_safetensors(dir.path().string(), {tensor_f32("a", {3}, three)}),
                         doctest::Contains("is a directory"), Error);
    CHECK_THROWS_WITH_AS(write_safetensors("", {tensor_f32("a", {3}, three)}),
                         "cannot write: the output file name is empty", Error);
    // A folder where no file can be made (/proc on Linux): the message says where it tried.
    if (std::filesystem::is_directory("/proc")) {
        CHECK_THROWS_WITH_AS(write_safetensors("/proc/version", {tensor_f32("a", {3}, three)}),
                             doctest::Contains("/proc/version: cannot write: cannot create a file in folder '/proc'"),
                             Error);
    }
}

TEST_CASE("bad safetensors files are rejected with the file and tensor named") {
    TempDir dir;
    const auto bad = [&](const std::string& name, const std::string& bytes) {
        const std::string path = dir.file(name);
        test::write_bytes(path, bytes);
        return path;
    };
    const std::string good_entry = R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})";

    SUBCASE("empty file") { check_rejected(bad("empty.safetensors", ""), {"empty"}); }
    SUBCASE("truncated before the header length") {
        check_rejected(bad("short.safetensors", std::string("\x10\0\0", 3)), {"is 3 bytes, too short"});
    }
    SUBCASE("header length past the end of the file") {
        check_rejected(bad("long.safetensors", with_header("{" + good_entry + "}", "", 4096)),
                       {"header length 4096", "past the end"});
    }
    SUBCASE("header length claims 2^64 - 1 bytes") {
        check_rejected(bad("huge.safetensors", with_header("{}", "", ~std::uint64_t{0})), {"header length"});
    }
    SUBCASE("header is not JSON") {
        check_rejected(bad("notjson.safetensors", with_header("{\"w\": [1, 2", "")), {"not valid JSON"});
    }
    SUBCASE("header is invalid UTF-8") {
        check_rejected(bad("utf8.safetensors", with_header("{\"\xff\xfe\":{}}", "")), {"not valid JSON"});
    }
    SUBCASE("header is JSON but not an object") {
        check_rejected(bad("array.safetensors", with_header("[1,2,3]", "")), {"JSON object"});
    }
    SUBCASE("unknown dtype") {
        check_rejected(
            bad("dtype.safetensors", with_header(R"({"w":{"dtype":"F8","shape":[2],"data_offsets":[0,2]}})")),
            {"tensor 'w'", "unsupported dtype 'F8'"});
    }
    SUBCASE("missing field") {
        check_rejected(bad("field.safetensors", with_header(R"({"w":{"dtype":"F32","shape":[2]}})")),
                       {"tensor 'w'", "data_offsets"});
    }
    SUBCASE("offsets past the end of the data") {
        check_rejected(
            bad("past.safetensors", with_header(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]}})")),
            {"tensor 'w'", "past the end of the data"});
    }
    SUBCASE("data truncated mid-tensor") {
        check_rejected(bad("cut.safetensors", with_header("{" + good_entry + "}", std::string(10, '\0'))),
                       {"tensor 'w'", "past the end"});
    }
    SUBCASE("offsets that end before they begin") {
        check_rejected(
            bad("reversed.safetensors", with_header(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})")),
            {"tensor 'w'", "end before they begin"});
    }
    SUBCASE("overlapping tensors") {
        check_rejected(
            bad("overlap.safetensors", with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                                   R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})")),
            {"tensor 'b'", "overlaps tensor 'a'"});
    }
    SUBCASE("shape does not match the byte range") {
        check_rejected(
            bad("size.safetensors", with_header(R"({"w":{"dtype":"F32","shape":[3,2],"data_offsets":[0,16]}})")),
            {"tensor 'w'", "needs 24 bytes", "give 16"});
    }
    SUBCASE("negative dimension") {
        check_rejected(
            bad("negative.safetensors", with_header(R"({"w":{"dtype":"F32","shape":[-2,2],"data_offsets":[0,16]}})")),
            {"tensor 'w'", "non-negative integer"});
    }
    SUBCASE("shape whose element count overflows") {
        check_rejected(
            bad("overflow.safetensors", with_header(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296,16],)"
                                                    R"("data_offsets":[0,16]}})")),
            {"tensor 'w'", "too large"});
    }
    SUBCASE("header length over the 100 MB limit, inside a (sparse) file that long") {
        const std::string path = dir.file("sparse.safetensors");
        const std::uint64_t claimed = 150'000'000;
        test::write_bytes(path, with_header("", "", claimed));
        std::filesystem::resize_file(path, claimed + 64);   // a hole, not 150 MB of disk
        check_rejected(path, {"header length 150000000", "100 MB limit"});
    }
    SUBCASE("offsets that are not integers") {
        check_rejected(
            bad("float.safetensors", with_header(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0.0,8]}})")),
            {"tensor 'w'", "non-negative integer", "0.0"});
    }
    SUBCASE("data_offsets with three numbers") {
        check_rejected(
            bad("three.safetensors", with_header(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}})")),
            {"tensor 'w'", "[begin, end]"});
    }
    SUBCASE("a tensor entry that is not an object") {
        check_rejected(bad("entry.safetensors", with_header(R"({"w":[1,2,3]})")), {"tensor 'w'", "expected an object"});
    }
    SUBCASE("a tensor listed twice (JSON would keep the last silently)") {
        check_rejected(
            bad("twice.safetensors", with_header(R"({"x":{"dtype":"NOPE","shape":[-1],"data_offsets":[5,99999999]},)"
                                                 R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})")),
            {"header: key \"x\" is given twice in the top level"});
    }
    SUBCASE("deeply nested JSON does not overflow the stack") {
        const std::string deep = std::string(200000, '[') + "1" + std::string(200000, ']');
        check_rejected(
            bad("deep.safetensors", with_header(R"({"w":{"dtype":"F32","data_offsets":[0,8],"shape":)" + deep + "}}")),
            {"nests deeper"});
    }
    SUBCASE("a FIFO is refused without waiting for a writer") {
        const std::string path = dir.file("fifo.safetensors");
        REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
        check_rejected(path, {"not a regular file"});
    }
    SUBCASE("metadata that is not strings") {
        check_rejected(bad("meta.safetensors", with_header(R"({"__metadata__":{"n":3}})")), {"__metadata__"});
    }
    SUBCASE("a directory") { check_rejected(dir.path().string(), {"is a directory"}); }
    SUBCASE("a missing file") { check_rejected(dir.file("nothing-here.safetensors"), {"no such file"}); }
}

TEST_CASE("parse_safetensors accepts zero-size tensors anywhere and holes between tensors") {
    const std::string bytes = with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                                          R"("z":{"dtype":"I64","shape":[0,5],"data_offsets":[4,4]}})");
    const auto parsed = parse_safetensors(std::as_bytes(std::span(bytes.data(), bytes.size())), "mem");
    REQUIRE(parsed.tensors.size() == 2);
    CHECK(parsed.tensors[0].name == "a");
    CHECK(parsed.tensors[1].numel() == 0);
}

TEST_CASE("parse_safetensors: at most 200,000 tensors per header, parsed in linear time") {
    const auto header_of = [](std::size_t n) {
        std::string header = "{";
        for (std::size_t i = 0; i < n; ++i) {
            header +=
                (i ? ",\"t" : "\"t") + std::to_string(i) + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
        }
        return with_header(header + "}", "");
    };
    const std::string most = header_of(200'000);
    CHECK(parse_safetensors(std::as_bytes(std::span(most.data(), most.size())), "mem").tensors.size() == 200'000);
    const std::string over = header_of(200'001);
    CHECK_THROWS_WITH_AS(parse_safetensors(std::as_bytes(std::span(over.data(), over.size())), "mem"),
                         "mem: header: the top level has more than 200000 entries", Error);
}

// Found by tests/fuzz/fuzz_safetensors: reading an empty F32 tensor handed memcpy a null
// pointer (UBSan: "null pointer passed as argument 1"), through to_floats and matrix().
TEST_CASE("empty tensors read as no values (fuzz regression)") {
    TempDir dir;
    const std::string path = dir.file("empty.safetensors");
    test::write_bytes(path, with_header(R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]}})", ""));
    const auto file = SafetensorsFile::open(path);
    CHECK(file.get("e").to_floats().empty());
    const Matrix m = file.matrix("e");
    CHECK(m.rows() == 0);
    CHECK(m.cols() == 4);
}
