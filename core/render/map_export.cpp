#include "core/render/map_export.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace headscope {

namespace {

void append_field(std::string& out, const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) {
        out += text;
        return;
    }
    out += '"';
    for (const char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

void append_value(std::string& out, float value) {
    if (std::isnan(value)) {
        out += "nan";
    } else if (std::isinf(value)) {
        out += value > 0 ? "inf" : "-inf";
    } else {
        char text[32];
        const auto written = std::to_chars(text, text + sizeof text, value);
        out.append(text, written.ptr);
    }
}

const std::string& label_at(const std::vector<std::string>& labels, Eigen::Index i) {
    static const std::string none;
    return i < static_cast<Eigen::Index>(labels.size()) ? labels[static_cast<std::size_t>(i)] : none;
}

}   // namespace

std::string map_csv(const Matrix& values, const std::vector<std::string>& row_labels,
                    const std::vector<std::string>& col_labels) {
    std::string out;
    for (Eigen::Index j = 0; j < values.cols(); ++j) {
        out += ',';
        append_field(out, label_at(col_labels, j));
    }
    out += "\r\n";
    for (Eigen::Index i = 0; i < values.rows(); ++i) {
        append_field(out, label_at(row_labels, i));
        for (Eigen::Index j = 0; j < values.cols(); ++j) {
            out += ',';
            append_value(out, values(i, j));
        }
        out += "\r\n";
    }
    return out;
}

std::vector<std::byte> map_npy(const Matrix& values) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(values.rows()) + ", " +
                         std::to_string(values.cols()) + "), }";
    // Magic (6), version (2) and length (2), then the header padded with spaces to a
    // multiple of 64 bytes and ended by a line end, as numpy writes it.
    const std::size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';
    std::vector<std::byte> out(10 + header.size() + static_cast<std::size_t>(values.size()) * sizeof(float));
    const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    std::memcpy(out.data(), magic, sizeof magic);
    out[8] = static_cast<std::byte>(header.size() & 0xFF);
    out[9] = static_cast<std::byte>(header.size() >> 8);
    std::memcpy(out.data() + 10, header.data(), header.size());
    // Row-major floats, little-endian as this machine stores them (x86-64, AArch64).
    std::memcpy(out.data() + 10 + header.size(), values.data(),
                static_cast<std::size_t>(values.size()) * sizeof(float));
    return out;
}

}   // namespace headscope
