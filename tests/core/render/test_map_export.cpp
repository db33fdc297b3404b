// A map as CSV and NPY (core/render/map_export.h), checked byte for byte against the
// formats as written by hand: RFC 4180's quoting, and numpy's NPY 1.0 header.

#include "core/render/map_export.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

using namespace headscope;

TEST_CASE("map export: CSV with labels on both axes, quoted where a label needs it") {
    Matrix values(2, 3);
    values << 0.5f, 0.25f, 0.25f, 1.0f, 0.0f, 0.1f;
    const std::string csv = map_csv(values, {"The", " cat, \"big\""}, {"k0", "k 1", "k\n2"});
    CHECK(csv == ",k0,k 1,\"k\n2\"\r\n"
                 "The,0.5,0.25,0.25\r\n"
                 "\" cat, \"\"big\"\"\",1,0,0.1\r\n");
    // Shortest text that reads back to the same float; missing labels empty.
    Matrix odd(1, 3);
    odd << 1.0f / 3.0f, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity();
    CHECK(map_csv(odd, {}, {}) == ",,,\r\n,0.33333334,nan,-inf\r\n");
}

TEST_CASE("map export: NPY 1.0, '<f4', C order, the header padded to 64 bytes") {
    Matrix values(2, 3);
    values << 1, 2, 3, 4, 5, 6.5f;
    const std::vector<std::byte> npy = map_npy(values);
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    // 10 bytes before the header; header + padding + '\n' = 118 so that 10 + 118 = 128.
    REQUIRE(npy.size() == 128 + 6 * 4);
    const std::string head(reinterpret_cast<const char*>(npy.data()), 128);
    CHECK(head.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    CHECK(static_cast<int>(npy[8]) + 256 * static_cast<int>(npy[9]) == 118);
    CHECK(head.substr(10, dict.size()) == dict);
    CHECK(head.substr(10 + dict.size(), 118 - dict.size() - 1) == std::string(118 - dict.size() - 1, ' '));
    CHECK(head.back() == '\n');
    float data[6];
    std::memcpy(data, npy.data() + 128, sizeof data);
    CHECK(data[1] == 2.0f);   // row-major: (0, 1)
    CHECK(data[3] == 4.0f);   // (1, 0)
    CHECK(data[5] == 6.5f);
}
