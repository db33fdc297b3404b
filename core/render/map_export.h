#pragma once
// A map as a file for other tools: CSV with the token labels on both axes (a
// spreadsheet), and NPY (numpy.load gives the [rows, cols] float32 array, row-major).

#include "core/tensor/matrix.h"

#include <cstddef>
#include <string>
#include <vector>

namespace headscope {

// The first row: an empty corner cell, then `col_labels`; each next row its label, then
// its values (shortest text that reads back to the same float; non-finite values as
// nan, inf, -inf). Fields with commas, quotes or line ends are quoted as RFC 4180 says.
// Labels missing for a row or column are left empty.
std::string map_csv(const Matrix& values, const std::vector<std::string>& row_labels,
                    const std::vector<std::string>& col_labels);

// NPY format 1.0: '<f4', C order, shape (rows, cols).
std::vector<std::byte> map_npy(const Matrix& values);

}   // namespace headscope
