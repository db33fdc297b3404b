#pragma once
// The element types a .safetensors file may hold, their names and sizes, and
// conversion of raw little-endian elements to float.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace headscope {

enum class DType { F32, F16, BF16, F64, I64, I32, U8, BOOL };

// The name used in safetensors headers ("F32", "BF16", ...).
std::string_view dtype_name(DType dtype);
// Parses a header dtype name; nullopt for names this reader does not support.
std::optional<DType> dtype_from_name(std::string_view name);
// Bytes per element.
std::size_t dtype_size(DType dtype);
bool dtype_is_float(DType dtype);

// IEEE half and bfloat16 <-> float, exact for every finite, infinite and NaN input.
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);       // round to nearest even
std::uint16_t float_to_bfloat16(float value);   // round to nearest even

// Converts `out.size()` elements stored little-endian at `bytes` (no alignment
// required) to float. Integers and bools become their value.
void convert_to_float(DType dtype, const std::byte* bytes, std::span<float> out);

// Whether each element is nonzero, decided on the stored value (so a tiny F64 that
// would round to 0.0f still counts, and NaN counts as nonzero, as in PyTorch).
void convert_to_nonzero(DType dtype, const std::byte* bytes, std::span<bool> out);

// How many of the `n` elements stored at `bytes` are NaN or +-Inf once read as float
// (so an F64 beyond float's range counts too). Integer and bool dtypes have none.
std::int64_t count_non_finite(DType dtype, const std::byte* bytes, std::size_t n);

}   // namespace headscope
