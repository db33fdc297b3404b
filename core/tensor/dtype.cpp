#include "core/tensor/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace headscope {

// safetensors stores little-endian data; we read it in place.
static_assert(std::endian::native == std::endian::little, "Headscope assumes a little-endian host");

namespace {

struct DTypeInfo {
    DType dtype;
    std::string_view name;
    std::size_t size;
    bool is_float;
};

constexpr std::array<DTypeInfo, 8> dtype_table = {{
    {DType::F32, "F32", 4, true},
    {DType::F16, "F16", 2, true},
    {DType::BF16, "BF16", 2, true},
    {DType::F64, "F64", 8, true},
    {DType::I64, "I64", 8, false},
    {DType::I32, "I32", 4, false},
    {DType::U8, "U8", 1, false},
    {DType::BOOL, "BOOL", 1, false},
}};

const DTypeInfo& info(DType dtype) {
    for (const auto& entry : dtype_table) {
        if (entry.dtype == dtype) return entry;
    }
    return dtype_table[0];   // unreachable: every enumerator is in the table
}

template <typename T>
T load(const std::byte* bytes) {
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    return value;
}

}   // namespace

std::string_view dtype_name(DType dtype) { return info(dtype).name; }
std::size_t dtype_size(DType dtype) { return info(dtype).size; }
bool dtype_is_float(DType dtype) { return info(dtype).is_float; }

std::optional<DType> dtype_from_name(std::string_view name) {
    for (const auto& entry : dtype_table) {
        if (entry.name == name) return entry.dtype;
    }
    return std::nullopt;
}

float half_to_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    std::uint32_t exponent = (bits >> 10) & 0x1fu;
    std::uint32_t mantissa = bits & 0x3ffu;
    std::uint32_t out;
    if (exponent == 0x1f) {   // inf or NaN (payload kept)
        out = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {   // normal
        out = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {   // signed zero
        out = sign;
    } else {   // subnormal: normalise it
        exponent = 113;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            --exponent;
        }
        out = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
    return std::bit_cast<float>(out);
}

float bfloat16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t float_to_bfloat16(float value) {
    std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        return static_cast<std::uint16_t>((bits >> 16) | 0x40u);   // quiet NaN
    }
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<std::uint16_t>(bits >> 16);
}

std::uint16_t float_to_half(float value) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
    const std::uint32_t abs = bits & 0x7fffffffu;
    if (abs > 0x7f800000u) return sign | 0x7e00u;    // NaN
    if (abs >= 0x477ff000u) return sign | 0x7c00u;   // rounds to >= 65520: inf
    if (abs < 0x38800000u) {                         // below the smallest normal half
        if (abs < 0x33000000u) return sign;          // below half the smallest subnormal
        const std::uint32_t exponent = abs >> 23;
        const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
        const std::uint32_t shift = 126 - exponent;   // 14..24
        std::uint32_t half = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1);
        const std::uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
        return sign | static_cast<std::uint16_t>(half);
    }
    std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
    rounded -= 112u << 23;   // rebias exponent 127 -> 15
    return sign | static_cast<std::uint16_t>(rounded >> 13);
}

void convert_to_float(DType dtype, const std::byte* bytes, std::span<float> out) {
    const std::size_t n = out.size();
    // An empty tensor ([0, 4]) has no storage: memcpy from or to a null pointer is UB even for 0 bytes.
    if (n == 0) return;
    switch (dtype) {
    case DType::F32: std::memcpy(out.data(), bytes, n * sizeof(float)); return;
    case DType::F16:
        for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(load<std::uint16_t>(bytes + 2 * i));
        return;
    case DType::BF16:
        for (std::size_t i = 0; i < n; ++i) out[i] = bfloat16_to_float(load<std::uint16_t>(bytes + 2 * i));
        return;
    case DType::F64:
        for (std::size_t i = 0; i < n; ++i) {
            // Out-of-range doubles become +-inf explicitly (a plain cast would be UB).
            const double v = load<double>(bytes + 8 * i);
            constexpr double top = std::numeric_limits<float>::max();
            out[i] = v > top    ? std::numeric_limits<float>::infinity()
                     : v < -top ? -std::numeric_limits<float>::infinity()
                                : static_cast<float>(v);
        }
        return;
    case DType::I64:
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::int64_t>(bytes + 8 * i));
        return;
    case DType::I32:
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::int32_t>(bytes + 4 * i));
        return;
    case DType::U8:
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::uint8_t>(bytes + i));
        return;
    case DType::BOOL:
        // Any nonzero byte is true, as numpy and PyTorch read it.
        for (std::size_t i = 0; i < n; ++i) out[i] = load<std::uint8_t>(bytes + i) != 0 ? 1.0f : 0.0f;
        return;
    }
}

void convert_to_nonzero(DType dtype, const std::byte* bytes, std::span<bool> out) {
    const std::size_t n = out.size();
    switch (dtype) {
    case DType::F32:
        for (std::size_t i = 0; i < n; ++i) out[i] = load<float>(bytes + 4 * i) != 0.0f;
        return;
    case DType::F64:
        for (std::size_t i = 0; i < n; ++i) out[i] = load<double>(bytes + 8 * i) != 0.0;
        return;
    case DType::F16:
    case DType::BF16:
        // Both 16-bit formats: zero is +0 or -0, i.e. every bit but the sign clear.
        for (std::size_t i = 0; i < n; ++i) out[i] = (load<std::uint16_t>(bytes + 2 * i) & 0x7fffu) != 0;
        return;
    case DType::I64:
        for (std::size_t i = 0; i < n; ++i) out[i] = load<std::int64_t>(bytes + 8 * i) != 0;
        return;
    case DType::I32:
        for (std::size_t i = 0; i < n; ++i) out[i] = load<std::int32_t>(bytes + 4 * i) != 0;
        return;
    case DType::U8:
    case DType::BOOL:
        for (std::size_t i = 0; i < n; ++i) out[i] = load<std::uint8_t>(bytes + i) != 0;
        return;
    }
}

std::int64_t count_non_finite(DType dtype, const std::byte* bytes, std::size_t n) {
    if (!dtype_is_float(dtype)) return 0;
    // Through convert_to_float in chunks, so every dtype's rule for what becomes
    // non-finite is the one the loaders apply.
    constexpr std::size_t chunk = 4096;
    std::array<float, chunk> buffer{};
    std::int64_t count = 0;
    const std::size_t element = dtype_size(dtype);
    for (std::size_t start = 0; start < n; start += chunk) {
        const std::size_t m = std::min(chunk, n - start);
        convert_to_float(dtype, bytes + start * element, std::span<float>(buffer.data(), m));
        for (std::size_t i = 0; i < m; ++i) count += std::isfinite(buffer[i]) ? 0 : 1;
    }
    return count;
}

}   // namespace headscope
