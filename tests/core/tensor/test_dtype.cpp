#include "core/tensor/dtype.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ios>
#include <limits>
#include <vector>

using namespace headscope;

TEST_CASE("dtype names and sizes round-trip") {
    for (auto [name, size] : std::vector<std::pair<const char*, std::size_t>>{
             {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"F64", 8}, {"I64", 8}, {"I32", 4}, {"U8", 1}, {"BOOL", 1}}) {
        const auto dtype = dtype_from_name(name);
        REQUIRE(dtype.has_value());
        CHECK(dtype_name(*dtype) == name);
        CHECK(dtype_size(*dtype) == size);
    }
    CHECK_FALSE(dtype_from_name("F8_E4M3").has_value());
    CHECK_FALSE(dtype_from_name("f32").has_value());   // names are case-sensitive, as in the format
}

TEST_CASE("half to float: hand-checked bit patterns") {
    CHECK(half_to_float(0x3c00) == 1.0f);
    CHECK(half_to_float(0xc000) == -2.0f);
    CHECK(half_to_float(0x3555) == 0.333251953125f);
    CHECK(half_to_float(0x7bff) == 65504.0f);                   // largest finite half
    CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));      // smallest normal
    CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));      // smallest subnormal
    CHECK(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));   // largest subnormal
    CHECK(std::signbit(half_to_float(0x8000)));
    CHECK(half_to_float(0x7c00) == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(half_to_float(0x7e00)));
}

TEST_CASE("float to half rounds to nearest even and round-trips every half") {
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const auto h = static_cast<std::uint16_t>(bits);
        const float f = half_to_float(h);
        if (std::isnan(f)) {
            CHECK(std::isnan(half_to_float(float_to_half(f))));
        } else if (float_to_half(f) != h) {
            FAIL("half 0x" << std::hex << bits << " did not round-trip");
        }
    }
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);       // tie -> even (down)
    CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);   // tie -> even (up)
    CHECK(float_to_half(65520.0f) == 0x7c00);                           // overflows to inf
    CHECK(float_to_half(65519.0f) == 0x7bff);
    CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);   // tie with 0 -> 0
    CHECK(float_to_half(std::ldexp(1.5f, -25)) == 0x0001);
}

TEST_CASE("bfloat16 conversions") {
    CHECK(bfloat16_to_float(0x3f80) == 1.0f);
    CHECK(bfloat16_to_float(0xc2f7) == -123.5f);
    CHECK(float_to_bfloat16(1.0f) == 0x3f80);
    CHECK(float_to_bfloat16(std::bit_cast<float>(0x3f808000u)) == 0x3f80);   // tie -> even
    CHECK(float_to_bfloat16(std::bit_cast<float>(0x3f818000u)) == 0x3f82);
    CHECK(std::isnan(bfloat16_to_float(float_to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("convert_to_float reads unaligned little-endian elements of every dtype") {
    std::vector<std::byte> raw(1 + 3 * 8);
    std::byte* at = raw.data() + 1;   // deliberately misaligned
    std::vector<float> out(3);

    const double f64[3] = {1.5, -2.25, 1e-3};
    std::memcpy(at, f64, sizeof f64);
    convert_to_float(DType::F64, at, out);
    CHECK(out == std::vector<float>{1.5f, -2.25f, 1e-3f});

    const std::int64_t i64[3] = {-7, 0, 1LL << 40};
    std::memcpy(at, i64, sizeof i64);
    convert_to_float(DType::I64, at, out);
    CHECK(out == std::vector<float>{-7.0f, 0.0f, std::ldexp(1.0f, 40)});

    const std::int32_t i32[3] = {3, -4, 5};
    std::memcpy(at, i32, sizeof i32);
    convert_to_float(DType::I32, at, out);
    CHECK(out == std::vector<float>{3.0f, -4.0f, 5.0f});

    const std::uint8_t bools[3] = {0, 1, 7};   // any nonzero byte is true
    std::memcpy(at, bools, sizeof bools);
    convert_to_float(DType::BOOL, at, out);
    CHECK(out == std::vector<float>{0.0f, 1.0f, 1.0f});
    convert_to_float(DType::U8, at, out);
    CHECK(out == std::vector<float>{0.0f, 1.0f, 7.0f});

    const std::uint16_t halves[3] = {0x3c00, 0xc000, 0x0001};
    std::memcpy(at, halves, sizeof halves);
    convert_to_float(DType::F16, at, out);
    CHECK(out == std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -24)});
    convert_to_float(DType::BF16, at, out);
    CHECK(out[0] == bfloat16_to_float(0x3c00));
}

TEST_CASE("nonzero flags are decided on the stored value") {
    std::vector<std::byte> raw(3 * 8);
    const double f64[3] = {1e-50, 0.0, -0.0};   // 1e-50 rounds to 0.0f, but is nonzero
    std::memcpy(raw.data(), f64, sizeof f64);
    bool out[3];
    convert_to_nonzero(DType::F64, raw.data(), out);
    CHECK(out[0]);
    CHECK_FALSE(out[1]);
    CHECK_FALSE(out[2]);
    const float f32[3] = {std::nanf(""), 0.0f, 2.0f};   // NaN is nonzero, as in PyTorch
    std::memcpy(raw.data(), f32, sizeof f32);
    convert_to_nonzero(DType::F32, raw.data(), out);
    CHECK((out[0] && !out[1] && out[2]));
    const std::uint16_t halves[3] = {0x8000, 0x0001, 0x0000};   // -0, smallest subnormal, +0
    std::memcpy(raw.data(), halves, sizeof halves);
    convert_to_nonzero(DType::F16, raw.data(), out);
    CHECK((!out[0] && out[1] && !out[2]));
    const std::int64_t i64[3] = {0, -1, 1LL << 40};
    std::memcpy(raw.data(), i64, sizeof i64);
    convert_to_nonzero(DType::I64, raw.data(), out);
    CHECK((!out[0] && out[1] && out[2]));
}

TEST_CASE("F64 values beyond float's range become infinities") {
    const double big[2] = {1e300, -1e300};
    std::vector<std::byte> raw(sizeof big);
    std::memcpy(raw.data(), big, sizeof big);
    std::vector<float> out(2);
    convert_to_float(DType::F64, raw.data(), out);
    CHECK(out[0] == std::numeric_limits<float>::infinity());
    CHECK(out[1] == -std::numeric_limits<float>::infinity());
}

TEST_CASE("count_non_finite: NaN and Inf in every float dtype, F64 past float's range, none in integers") {
    const auto bytes_of = [](const auto& values) {
        std::vector<std::byte> b(sizeof(values[0]) * values.size());
        std::memcpy(b.data(), values.data(), b.size());
        return b;
    };
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> f32{1.0f, std::nanf(""), -inf, 0.0f, inf};
    CHECK(count_non_finite(DType::F32, bytes_of(f32).data(), f32.size()) == 3);
    // F16: 0x7c00 = +Inf, 0xfe00 = a NaN, 0x7bff = 65504 (the largest finite half).
    const std::vector<std::uint16_t> f16{0x3c00, 0x7c00, 0xfe00, 0x7bff};
    CHECK(count_non_finite(DType::F16, bytes_of(f16).data(), f16.size()) == 2);
    // BF16: 0xff80 = -Inf, 0x7fc1 = a NaN, 0x7f7f = the largest finite bfloat16.
    const std::vector<std::uint16_t> bf16{0xff80, 0x7fc1, 0x7f7f, 0x0000};
    CHECK(count_non_finite(DType::BF16, bytes_of(bf16).data(), bf16.size()) == 2);
    // F64 1e300 is finite as a double but Inf once read as float, as the loaders read it.
    const std::vector<double> f64{1e300, -2.5, std::nan(""), 1e-300};
    CHECK(count_non_finite(DType::F64, bytes_of(f64).data(), f64.size()) == 2);
    const std::vector<std::int32_t> i32{-1, 0x7f800000, 7};
    CHECK(count_non_finite(DType::I32, bytes_of(i32).data(), i32.size()) == 0);
    // Longer than one conversion chunk: every element counted once.
    std::vector<float> many(10000, 1.0f);
    for (std::size_t i = 0; i < many.size(); i += 1000) many[i] = std::nanf("");
    CHECK(count_non_finite(DType::F32, bytes_of(many).data(), many.size()) == 10);
}
