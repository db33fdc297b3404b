// Decoding image files to 8-bit RGB exactly as Pillow's Image.open(f).convert("RGB").
//
// stb_image does the decoding. Around it, this file (1) recognises the format from its
// first bytes and refuses the formats stb reads but we do not promise, (2) walks the
// file's structure (PNG chunks and their CRCs, JPEG markers, GIF blocks, BMP and TGA
// pixel-data sizes) because stb fills a truncated file with zeros where Pillow refuses
// it, (3) reads the size with stbi_info and refuses zero or oversized images before any
// pixel is decoded, and (4) fixes the few conversions where stb and Pillow differ:
// 16-bit greyscale PNG (Pillow clips the value to 0..255, stb takes the high byte),
// GIF transparency (Pillow shows the palette colour of the transparent index, stb
// black), and 16-bit BMP (Pillow scales a 5-bit channel by v * 255 / 31, stb replicates
// bits). JPEG is the exception: after (1) to (3) it is decoded by libjpeg-turbo, the
// decoder Pillow uses, rather than stb (decode_jpeg says why).

#include "core/base/error.h"
#include "core/image/image.h"

#include <stb_image.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <system_error>

namespace headscope {

namespace {

enum class Format { png, jpeg, gif, bmp, tga };

const char* format_name(Format format) {
    switch (format) {
    case Format::png: return "PNG";
    case Format::jpeg: return "JPEG";
    case Format::gif: return "GIF";
    case Format::bmp: return "BMP";
    case Format::tga: return "TGA";
    }
    return "image";
}

// Bounds-checked little/big-endian reads: every offset comes from the file.
class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
    std::size_t size() const { return bytes_.size(); }
    bool has(std::size_t offset, std::size_t count) const {
        return offset <= bytes_.size() && count <= bytes_.size() - offset;
    }
    std::uint8_t u8(std::size_t offset) const { return bytes_[offset]; }
    std::uint32_t u16le(std::size_t offset) const { return bytes_[offset] | (std::uint32_t{bytes_[offset + 1]} << 8); }
    std::uint32_t u32le(std::size_t offset) const { return u16le(offset) | (u16le(offset + 2) << 16); }
    std::uint32_t u32be(std::size_t offset) const {
        return (std::uint32_t{bytes_[offset]} << 24) | (std::uint32_t{bytes_[offset + 1]} << 16) |
               (std::uint32_t{bytes_[offset + 2]} << 8) | bytes_[offset + 3];
    }
    bool starts_with(std::string_view magic) const {
        return bytes_.size() >= magic.size() && std::memcmp(bytes_.data(), magic.data(), magic.size()) == 0;
    }
    std::span<const std::uint8_t> sub(std::size_t offset, std::size_t count) const {
        return bytes_.subspan(offset, count);
    }

private:
    std::span<const std::uint8_t> bytes_;
};

// The TGA header checks of stb's stbi__tga_test (TGA has no magic number): colour-map
// type 0 or 1, a known image type, plausible bit depths.
bool looks_like_tga(const Reader& r) {
    if (!r.has(0, 18)) return false;
    const int cmap_type = r.u8(1), image_type = r.u8(2), cmap_bits = r.u8(7), bpp = r.u8(16);
    if (cmap_type > 1) return false;
    if (cmap_type == 1) {
        if (image_type != 1 && image_type != 9) return false;
        if (cmap_bits != 8 && cmap_bits != 15 && cmap_bits != 16 && cmap_bits != 24 && cmap_bits != 32) return false;
        if (bpp != 8 && bpp != 16) return false;
    } else {
        if (image_type != 2 && image_type != 3 && image_type != 10 && image_type != 11) return false;
        if (bpp != 8 && bpp != 15 && bpp != 16 && bpp != 24 && bpp != 32) return false;
    }
    return true;
}

Format detect_format(const Reader& r, const std::string& label) {
    if (r.starts_with("\x89PNG\r\n\x1a\n")) return Format::png;
    if (r.starts_with("\xff\xd8\xff")) return Format::jpeg;
    if (r.starts_with("GIF87a") || r.starts_with("GIF89a")) return Format::gif;
    if (r.starts_with("BM")) return Format::bmp;
    // Formats stb_image would decode but Pillow reads differently (or not at all): refused
    // by name rather than decoded to pixels that do not match.
    const char* other = nullptr;
    if (r.starts_with("8BPS"))
        other = "PSD";
    else if (r.starts_with("#?RADIANCE") || r.starts_with("#?RGBE"))
        other = "Radiance HDR";
    else if (r.starts_with("\x53\x80\xf6\x34"))
        other = "Softimage PIC";
    else if (r.size() >= 2 && r.u8(0) == 'P' && r.u8(1) >= '1' && r.u8(1) <= '7')
        other = "PNM";
    else if (r.starts_with("RIFF") && r.has(8, 4) && std::memcmp(r.sub(8, 4).data(), "WEBP", 4) == 0)
        other = "WebP";
    else if (r.starts_with("II*") || r.starts_with("MM\0*"))
        other = "TIFF";
    if (other) {
        throw Error(label + ": unsupported image format (" + other + "); expected PNG, JPEG, BMP, GIF or TGA");
    }
    if (looks_like_tga(r)) return Format::tga;
    throw Error(label + ": unsupported or unrecognised image format; expected PNG, JPEG, BMP, GIF or TGA");
}

[[noreturn]] void truncated(const std::string& label, Format format, const std::string& detail) {
    throw Error(label + ": truncated " + format_name(format) + " file (" + detail + ")");
}

[[noreturn]] void corrupt(const std::string& label, Format format, const std::string& detail) {
    throw Error(label + ": corrupt " + format_name(format) + " file (" + detail + ")");
}

std::uint32_t crc32(std::span<const std::uint8_t> bytes) {
    // Bitwise CRC-32 (the PNG / zlib polynomial): images are small next to decoding cost.
    std::uint32_t crc = 0xffffffffu;
    for (std::uint8_t byte : bytes) {
        crc ^= byte;
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

// Where the first GIF frame lies on the logical screen, its transparent index and colours.
struct GifFrame {
    int x = 0, y = 0, width = 0, height = 0;
    int transparent = -1;
    std::span<const std::uint8_t> palette;   // [colours, 3]
};

struct Bmp16Masks {
    std::uint32_t red = 0, green = 0, blue = 0;
};

// What the structure walk learns: the size the header claims (checked against the limit
// before stb allocates anything), and what the conversion fix-ups need.
struct FileInfo {
    std::int64_t width = 0, height = 0;
    bool png_grey16 = false;           // 16-bit greyscale PNG without alpha
    std::optional<GifFrame> gif;       // the first frame of a GIF
    std::optional<Bmp16Masks> bmp16;   // the channel masks of a 16-bit BMP
};

void check_size(const std::string& label, std::int64_t width, std::int64_t height);

// What stb_image allocates for a PNG is the decoded samples (a 16-bit picture at 16 bits
// per sample, then again at 8), not the pixels: 512 MiB of them is the most a picture may
// hold, the size of a 128-megapixel RGBA picture at 8 bits.
constexpr std::int64_t max_png_sample_bytes = std::int64_t{512} << 20;

// The IHDR fields that size a PNG's image data.
struct PngHeader {
    std::int64_t width = 0, height = 0;
    int depth = 0, colour_type = 0, interlace = 0;
};

int png_channels(int colour_type) {
    switch (colour_type) {
    case 0: return 1;   // grey
    case 2: return 3;   // RGB
    case 3: return 1;   // palette index
    case 4: return 2;   // grey + alpha
    case 6: return 4;   // RGBA
    default: return 0;
    }
}

// The bytes the filtered scanlines of `h` take: one filter byte per row (for each of the
// seven passes when interlaced: at most seven times the rows), then the samples.
std::int64_t png_raw_bytes(const PngHeader& h) {
    const std::int64_t row = (h.width * png_channels(h.colour_type) * h.depth + 7) / 8;
    return h.height * row + (h.interlace ? 7 : 1) * h.height;
}

// Inflates the image data with a cap, discarding it, before stb inflates it whole:
// stb grows its buffer for as long as the data goes on, so 1 MB of zlib that inflates to
// 2 GB took 2 GB. More data than the header's size needs is refused here.
void check_png_inflation(std::span<const std::span<const std::uint8_t>> idat, std::int64_t expected,
                         const std::string& label) {
    z_stream z{};
    if (inflateInit(&z) != Z_OK) throw Error(label + ": cannot start inflating the PNG data (zlib)");
    std::vector<std::uint8_t> sink(1 << 16);
    std::int64_t total = 0;
    int status = Z_OK;
    for (std::size_t i = 0; i < idat.size() && status != Z_STREAM_END; ++i) {
        z.next_in = const_cast<Bytef*>(idat[i].data());
        z.avail_in = static_cast<uInt>(idat[i].size());
        while (z.avail_in > 0 && status == Z_OK) {
            z.next_out = sink.data();
            z.avail_out = static_cast<uInt>(sink.size());
            status = inflate(&z, Z_NO_FLUSH);
            total += static_cast<std::int64_t>(sink.size() - z.avail_out);
            if (total > expected) {
                inflateEnd(&z);
                corrupt(label, Format::png,
                        "the image data inflates past the " + std::to_string(expected) + " bytes its size needs");
            }
            if (status == Z_BUF_ERROR && z.avail_in > 0) status = Z_OK;   // output full: go on
        }
    }
    inflateEnd(&z);
    // A broken stream is left to stb, whose message the catalogue already names.
}

// Every chunk inside the file with a matching CRC, IHDR first, IEND present: stb checks
// neither CRCs nor the end of the file. The image data is then inflated with a cap.
void check_png(const Reader& r, const std::string& label, FileInfo& info) {
    std::size_t offset = 8;
    bool first = true;
    PngHeader header;
    std::vector<std::span<const std::uint8_t>> idat;
    for (;;) {
        if (!r.has(offset, 8)) truncated(label, Format::png, "no IEND chunk");
        const std::uint32_t length = r.u32be(offset);
        const std::string type(reinterpret_cast<const char*>(r.sub(offset + 4, 4).data()), 4);
        for (char c : type) {   // four ASCII letters, so the name is safe to print
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) corrupt(label, Format::png, "bad chunk type");
        }
        if (length > 0x7fffffffu) corrupt(label, Format::png, "chunk length " + std::to_string(length));
        if (!r.has(offset + 8, std::size_t{length} + 4)) truncated(label, Format::png, "in chunk " + type);
        if (crc32(r.sub(offset + 4, std::size_t{length} + 4)) != r.u32be(offset + 8 + length)) {
            corrupt(label, Format::png, "bad CRC in chunk " + type);
        }
        if (first) {
            if (type != "IHDR" || length != 13) corrupt(label, Format::png, "first chunk is not IHDR");
            header = {r.u32be(offset + 8), r.u32be(offset + 12), r.u8(offset + 16), r.u8(offset + 17),
                      r.u8(offset + 20)};
            info.width = header.width;
            info.height = header.height;
            // Pillow opens 16-bit greyscale as mode "I"; every other 16-bit PNG as 8-bit.
            info.png_grey16 = header.depth == 16 && header.colour_type == 0;
            first = false;
        }
        if (type == "IDAT") idat.push_back(r.sub(offset + 8, length));
        if (type == "IEND") break;
        offset += 12 + std::size_t{length};
    }
    check_size(label, info.width, info.height);
    // Palette pictures decode to RGB(A); samples of 16 bits take two bytes.
    const int channels = header.colour_type == 3 ? 4 : png_channels(header.colour_type);
    const std::int64_t sample_bytes = info.width * info.height * channels * (header.depth == 16 ? 2 : 1);
    if (sample_bytes > max_png_sample_bytes) {
        throw Error(label + ": image is " + std::to_string(info.width) + "x" + std::to_string(info.height) + " at " +
                    std::to_string(header.depth) + " bits, " + std::to_string(sample_bytes >> 20) +
                    " MiB decoded, over the limit of " + std::to_string(max_png_sample_bytes >> 20) + " MiB");
    }
    if (png_channels(header.colour_type) > 0 && header.depth >= 1 && header.depth <= 16) {
        check_png_inflation(idat, png_raw_bytes(header), label);
    }
}

// A DHT segment's tables: each one's 16 code-length counts sum to at most 256 symbols,
// all inside the segment, as libjpeg requires. stb_image 2.27 (Debian 12's) does not
// check the sum and writes past its 257-entry tables (found by tests/fuzz/fuzz_image).
void check_jpeg_huffman(const Reader& r, std::size_t at, std::size_t end, const std::string& label) {
    while (at < end) {
        if (end - at < 17) corrupt(label, Format::jpeg, "Huffman table (DHT) cut short");
        std::size_t n = 0;
        for (std::size_t i = 1; i <= 16; ++i) n += r.u8(at + i);
        if (n > 256 || n > end - at - 17) {
            corrupt(label, Format::jpeg,
                    "Huffman table (DHT) of " + std::to_string(n) +
                        " symbols, expected at most 256 within its segment");
        }
        at += 17 + n;
    }
}

// Marker segments up to EOI; the entropy-coded data after each SOS up to its next
// marker. libjpeg (and so Pillow) refuses a file that ends before EOI, and markers no
// JPEG defines; stb pads the first and may skip the second.
void check_jpeg(const Reader& r, const std::string& label, FileInfo& info) {
    std::size_t offset = 2;
    bool saw_frame = false;
    for (;;) {
        // Like libjpeg, skip stray bytes and fill bytes (0xff runs) before a marker.
        while (r.has(offset, 1) && r.u8(offset) != 0xff) ++offset;
        while (r.has(offset, 1) && r.u8(offset) == 0xff) ++offset;
        if (!r.has(offset, 1)) truncated(label, Format::jpeg, "no end-of-image marker");
        const int marker = r.u8(offset++);
        if (marker == 0xd9) {   // EOI
            if (!saw_frame) corrupt(label, Format::jpeg, "no frame header (SOF marker)");
            return;
        }
        if (marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;   // no length
        if (marker < 0xc0 || marker == 0xd8) {                                // libjpeg refuses these too
            static constexpr char hex[] = "0123456789abcdef";
            corrupt(label, Format::jpeg, std::string("unexpected marker 0x") + hex[marker >> 4] + hex[marker & 15]);
        }
        if (!r.has(offset, 2)) truncated(label, Format::jpeg, "in a marker segment");
        const std::size_t length = (std::size_t{r.u8(offset)} << 8) | r.u8(offset + 1);
        if (length < 2) corrupt(label, Format::jpeg, "marker segment length " + std::to_string(length));
        if (!r.has(offset, length)) truncated(label, Format::jpeg, "in a marker segment");
        // SOF0..SOF15 (not DHT c4, JPG c8, DAC cc): precision, height, width.
        const bool frame = marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc;
        if (frame && length < 8) corrupt(label, Format::jpeg, "frame header of " + std::to_string(length) + " bytes");
        if (frame) {
            saw_frame = true;
            info.height = (std::int64_t{r.u8(offset + 3)} << 8) | r.u8(offset + 4);
            info.width = (std::int64_t{r.u8(offset + 5)} << 8) | r.u8(offset + 6);
        }
        if (marker == 0xc4) check_jpeg_huffman(r, offset + 2, offset + length, label);
        offset += length;
        if (marker != 0xda) continue;   // not SOS
        // Scan data: 0xff 0x00 is a stuffed byte and 0xff 0xd0..d7 a restart; any other
        // 0xff xx is the next marker.
        for (;;) {
            if (!r.has(offset, 2)) truncated(label, Format::jpeg, "in the image data");
            if (r.u8(offset) == 0xff) {
                const int next = r.u8(offset + 1);
                if (next != 0x00 && next != 0xff && !(next >= 0xd0 && next <= 0xd7)) break;
            }
            ++offset;
        }
    }
}

std::size_t skip_gif_sub_blocks(const Reader& r, std::size_t offset, const std::string& label) {
    for (;;) {
        if (!r.has(offset, 1)) truncated(label, Format::gif, "in a data block");
        const std::size_t length = r.u8(offset);
        if (length == 0) return offset + 1;
        if (!r.has(offset + 1, length)) truncated(label, Format::gif, "in a data block");
        offset += 1 + length;
    }
}

// Blocks up to the end of the first frame's data. Records what of that frame Pillow shows
// and stb does not: where it lies on the logical screen, its transparent index, and its
// colour table.
void check_gif(const Reader& r, const std::string& label, FileInfo& info) {
    if (!r.has(0, 13)) truncated(label, Format::gif, "in the header");
    info.width = r.u16le(6);
    info.height = r.u16le(8);
    const int flags = r.u8(10);
    std::size_t offset = 13;
    std::span<const std::uint8_t> global_palette;
    if (flags & 0x80) {
        const std::size_t bytes = 3 * (std::size_t{2} << (flags & 7));
        if (!r.has(offset, bytes)) truncated(label, Format::gif, "in the colour table");
        global_palette = r.sub(offset, bytes);
        offset += bytes;
    }
    GifFrame frame;
    for (;;) {
        if (!r.has(offset, 1)) truncated(label, Format::gif, "before the first frame");
        const int block = r.u8(offset);
        if (block == 0x21) {   // extension
            if (!r.has(offset, 2)) truncated(label, Format::gif, "in an extension");
            // Graphic control extension: the last one before the image applies to it.
            if (r.u8(offset + 1) == 0xf9 && r.has(offset + 2, 6) && r.u8(offset + 2) == 4) {
                frame.transparent = (r.u8(offset + 3) & 1) ? r.u8(offset + 6) : -1;
            }
            offset = skip_gif_sub_blocks(r, offset + 2, label);
        } else if (block == 0x2c) {   // image descriptor
            if (!r.has(offset, 10)) truncated(label, Format::gif, "in the image descriptor");
            frame.x = static_cast<int>(r.u16le(offset + 1));
            frame.y = static_cast<int>(r.u16le(offset + 3));
            frame.width = static_cast<int>(r.u16le(offset + 5));
            frame.height = static_cast<int>(r.u16le(offset + 7));
            const int local_flags = r.u8(offset + 9);
            offset += 10;
            frame.palette = global_palette;
            if (local_flags & 0x80) {
                const std::size_t bytes = 3 * (std::size_t{2} << (local_flags & 7));
                if (!r.has(offset, bytes)) truncated(label, Format::gif, "in the colour table");
                frame.palette = r.sub(offset, bytes);
                offset += bytes;
            }
            if (!r.has(offset, 1)) truncated(label, Format::gif, "in the image data");
            // LZW codes grow to 12 bits at most: Pillow refuses a larger start ("codec
            // configuration error"), and stb gives up on it without saying why.
            if (const int bits = r.u8(offset); bits > 12) {
                corrupt(label, Format::gif, "LZW code size " + std::to_string(bits) + ", expected at most 12");
            }
            skip_gif_sub_blocks(r, offset + 1, label);   // after the LZW code size
            info.gif = frame;
            return;
        } else if (block == 0x3b) {
            corrupt(label, Format::gif, "no image before the trailer");
        } else {
            corrupt(label, Format::gif, "unknown block type " + std::to_string(block));
        }
    }
}

// Uncompressed pixel data must fit in the file (stb reads zeros past its end). Records the
// channel masks of a 16-bit file.
void check_bmp(const Reader& r, const std::string& label, FileInfo& info) {
    if (!r.has(0, 18)) truncated(label, Format::bmp, "in the header");
    const std::uint64_t pixel_offset = r.u32le(10);
    const std::uint32_t header_size = r.u32le(14);
    std::int64_t width = 0, height = 0;
    std::uint32_t bpp = 0, compression = 0;
    if (header_size == 12) {
        if (!r.has(14, 12)) truncated(label, Format::bmp, "in the header");
        width = r.u16le(18);
        height = r.u16le(20);
        bpp = r.u16le(24);
    } else {
        if (!r.has(14, 20)) truncated(label, Format::bmp, "in the header");
        width = static_cast<std::int32_t>(r.u32le(18));
        height = static_cast<std::int32_t>(r.u32le(22));
        bpp = r.u16le(28);
        compression = r.u32le(30);
    }
    if (height < 0) height = -height;   // top-down rows
    info.width = width;
    info.height = height;
    if ((compression == 0 || compression == 3) && width > 0 && bpp > 0 && bpp <= 32) {
        const std::uint64_t row_bytes = (static_cast<std::uint64_t>(width) * bpp + 31) / 32 * 4;
        const std::uint64_t needed = pixel_offset + row_bytes * static_cast<std::uint64_t>(height);
        if (needed > r.size()) {
            truncated(label, Format::bmp,
                      std::to_string(r.size()) + " bytes, the pixels need " + std::to_string(needed));
        }
    }
    if (bpp != 16) return;
    if (compression == 0) info.bmp16 = Bmp16Masks{0x7c00, 0x03e0, 0x001f};
    if (compression == 3) {
        // The masks follow a 40-byte header, or sit inside a V4 / V5 header at the same place.
        if (!r.has(54, 12)) truncated(label, Format::bmp, "in the colour masks");
        info.bmp16 = Bmp16Masks{r.u32le(54), r.u32le(58), r.u32le(62)};
    }
}

// Uncompressed pixels must fit; run-length packets must cover the image.
void check_tga(const Reader& r, const std::string& label, FileInfo& info) {
    info.width = r.u16le(12);
    info.height = r.u16le(14);
    const std::size_t id_length = r.u8(0);
    const int cmap_type = r.u8(1), image_type = r.u8(2);
    const std::size_t cmap_length = cmap_type == 1 ? r.u16le(5) : 0;
    const std::size_t cmap_entry = (std::size_t{r.u8(7)} + 7) / 8;
    const std::uint64_t n_pixels = std::uint64_t{r.u16le(12)} * r.u16le(14);
    const std::size_t pixel_bytes = (std::size_t{r.u8(16)} + 7) / 8;
    const std::size_t offset = 18 + id_length + cmap_length * cmap_entry;
    if (!r.has(offset, 0)) truncated(label, Format::tga, "in the colour map");
    if (image_type < 8) {
        if (n_pixels * pixel_bytes > r.size() - offset) truncated(label, Format::tga, "in the pixels");
        return;
    }
    std::uint64_t covered = 0;
    std::size_t at = offset;
    while (covered < n_pixels) {
        if (!r.has(at, 1)) truncated(label, Format::tga, "in the run-length pixels");
        const int packet = r.u8(at++);
        const std::size_t count = std::size_t(packet & 0x7f) + 1;
        const std::size_t bytes = (packet & 0x80) ? pixel_bytes : count * pixel_bytes;
        if (!r.has(at, bytes)) truncated(label, Format::tga, "in the run-length pixels");
        at += bytes;
        covered += count;
    }
}

void check_size(const std::string& label, std::int64_t width, std::int64_t height) {
    const std::string size = std::to_string(width) + "x" + std::to_string(height);
    if (width <= 0 || height <= 0) throw Error(label + ": image has zero width or height (" + size + ")");
    if (width > max_image_side || height > max_image_side) {
        throw Error(label + ": image is " + size + " pixels, over the limit of " + std::to_string(max_image_side) +
                    " pixels per side");
    }
    if (width * height > max_image_pixels) {
        throw Error(label + ": image is " + size + " = " + std::to_string(width * height) +
                    " pixels, over the limit of " + std::to_string(max_image_pixels) + " (128 megapixels)");
    }
}

// stb keeps its last failure per thread.
std::string stb_reason() {
    // A GIF whose frames stb cannot find fails with no reason at all ("stb_image: ").
    const char* reason = stbi_failure_reason();
    if (reason == nullptr || *reason == '\0') return "no image data the decoder could read";
    return std::string("stb_image: ") + reason;
}

struct StbFree {
    void operator()(void* p) const { stbi_image_free(p); }
};

// stb's 16-bit BMP channel value (bit replication, stbi__shiftsigned) -> Pillow's
// (v * 255 / (2^bits - 1), Unpack.c's BGR;15 and BGR;16). Only the two layouts Pillow
// reads are remapped.
void fix_bmp16(RgbImage& image, const Bmp16Masks& masks) {
    int bits[3];
    if (masks.red == 0x7c00 && masks.green == 0x03e0 && masks.blue == 0x001f) {
        bits[0] = bits[1] = bits[2] = 5;
    } else if (masks.red == 0xf800 && masks.green == 0x07e0 && masks.blue == 0x001f) {
        bits[0] = 5, bits[1] = 6, bits[2] = 5;
    } else {
        return;
    }
    for (std::size_t i = 0; i < image.pixels.size(); ++i) {
        const int b = bits[i % 3];
        const int v = image.pixels[i] >> (8 - b);   // replication keeps the value's bits on top
        image.pixels[i] = static_cast<std::uint8_t>(v * 255 / ((1 << b) - 1));
    }
}

struct TurboJpegFree {
    void operator()(void* handle) const { tjDestroy(handle); }
};

// JPEG goes through libjpeg-turbo's TurboJPEG API, not stb_image: stb_image 2.27 reads
// past its Huffman tables on entropy-coded data that no valid code reaches
// (tests/fuzz/README.md), which no check before decoding can find, and on a hostile file
// that read can crash the process (the fuzz target hit it in CI). libjpeg-turbo is also
// the decoder Pillow uses, with the same defaults (accurate integer IDCT, smooth chroma
// upsampling), so the pixels are Pillow's. Warnings (a cut or damaged scan, which libjpeg
// would fill with grey) refuse the file, as do more than 500 progressive scans (a
// decoding-time bomb). CMYK JPEGs are refused: libjpeg does not convert them to RGB.
RgbImage decode_jpeg(std::span<const std::uint8_t> data, const std::string& label) {
    const std::unique_ptr<void, TurboJpegFree> decoder(tjInitDecompress());
    if (!decoder) throw Error(label + ": cannot start the JPEG decoder (" + tjGetErrorStr2(nullptr) + ")");
    const auto reason = [&] { return std::string("libjpeg-turbo: ") + tjGetErrorStr2(decoder.get()); };
    const auto size = static_cast<unsigned long>(data.size());
    int width = 0, height = 0, subsampling = 0, colorspace = 0;
    if (tjDecompressHeader3(decoder.get(), data.data(), size, &width, &height, &subsampling, &colorspace) != 0) {
        corrupt(label, Format::jpeg, reason());
    }
    check_size(label, width, height);
    if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
        throw Error(label + ": CMYK JPEG is not supported; expected a colour (YCbCr or RGB) or greyscale JPEG");
    }
    RgbImage image;
    image.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
    if (tjDecompress2(decoder.get(), data.data(), size, image.pixels.data(), width, 0, height, TJPF_RGB,
                      TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {
        corrupt(label, Format::jpeg, reason());
    }
    image.width = width;
    image.height = height;
    return image;
}

// The format's header checks; they fill in what decoding needs to know.
FileInfo check_header(const Reader& reader, Format format, const std::string& label) {
    FileInfo info;
    switch (format) {
    case Format::png: check_png(reader, label, info); break;
    case Format::jpeg: check_jpeg(reader, label, info); break;
    case Format::gif: check_gif(reader, label, info); break;
    case Format::bmp: check_bmp(reader, label, info); break;
    case Format::tga: check_tga(reader, label, info); break;
    }
    return info;
}

// A file stb decodes, whose size stb_info has read.
struct StbSource {
    const stbi_uc* bytes = nullptr;
    int n_bytes = 0;
    int width = 0;
    int height = 0;
    Format format = Format::png;
    const std::string& label;

    std::size_t n_pixels() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(height); }
    void check_decoded_size(int got_width, int got_height) const {
        if (got_width != width || got_height != height) corrupt(label, format, "size changed while decoding");
    }
};

// A 16-bit greyscale PNG: Pillow opens it as mode "I" and convert("RGB") clips to 0..255.
std::vector<std::uint8_t> decode_grey16(const StbSource& src) {
    int got_width = 0, got_height = 0, got_channels = 0;
    std::unique_ptr<stbi_us, StbFree> grey(
        stbi_load_16_from_memory(src.bytes, src.n_bytes, &got_width, &got_height, &got_channels, 1));
    if (!grey) corrupt(src.label, src.format, stb_reason());
    src.check_decoded_size(got_width, got_height);
    const std::size_t n_pixels = src.n_pixels();
    std::vector<std::uint8_t> pixels(n_pixels * 3);
    for (std::size_t i = 0; i < n_pixels; ++i) {
        const auto v = static_cast<std::uint8_t>(std::min<stbi_us>(grey.get()[i], 255));
        pixels[i * 3 + 0] = pixels[i * 3 + 1] = pixels[i * 3 + 2] = v;
    }
    return pixels;
}

// GIF frame 0 as Pillow shows it, from stb's RGBA: Pillow draws the frame onto a canvas
// filled with the transparent index (index 0 when there is none) and shows every index
// through the frame's palette; stb leaves transparent pixels black and fills outside the
// frame with the background colour.
void draw_gif_frame(const stbi_uc* rgba, const GifFrame& gif, int width, int height, std::uint8_t* pixels) {
    const auto colour = [&](int index) {
        std::array<std::uint8_t, 3> rgb{0, 0, 0};
        const std::size_t at = static_cast<std::size_t>(index) * 3;
        if (at + 3 <= gif.palette.size()) std::memcpy(rgb.data(), gif.palette.data() + at, 3);
        return rgb;
    };
    const auto fill = colour(gif.transparent >= 0 ? gif.transparent : 0);
    const auto see_through = colour(std::max(gif.transparent, 0));
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            const std::size_t i = static_cast<std::size_t>(y) * width + x;
            const bool inside = x >= gif.x && x < gif.x + gif.width && y >= gif.y && y < gif.y + gif.height;
            const stbi_uc* p = rgba + i * 4;
            std::uint8_t* out = pixels + i * 3;
            if (!inside) {
                std::memcpy(out, fill.data(), 3);
            } else if (p[3] == 0 && gif.transparent >= 0) {
                std::memcpy(out, see_through.data(), 3);
            } else {
                std::memcpy(out, p, 3);
            }
        }
    }
}

// Everything else is 8-bit RGB(A) from stb: alpha dropped, grey replicated, palettes
// looked up, 16-bit colour reduced to its high byte, as Pillow does. GIF keeps alpha to
// find the pixels stb left transparent.
std::vector<std::uint8_t> decode_rgb(const StbSource& src, const std::optional<GifFrame>& gif) {
    int got_width = 0, got_height = 0, got_channels = 0;
    const int wanted = gif ? 4 : 3;
    std::unique_ptr<stbi_uc, StbFree> decoded(
        stbi_load_from_memory(src.bytes, src.n_bytes, &got_width, &got_height, &got_channels, wanted));
    if (!decoded) corrupt(src.label, src.format, stb_reason());
    src.check_decoded_size(got_width, got_height);
    std::vector<std::uint8_t> pixels(src.n_pixels() * 3);
    if (!gif) {
        std::memcpy(pixels.data(), decoded.get(), src.n_pixels() * 3);
    } else {
        draw_gif_frame(decoded.get(), *gif, src.width, src.height, pixels.data());
    }
    return pixels;
}

}   // namespace

RgbImage decode_image_bytes(std::span<const std::byte> bytes, const std::string& label) {
    if (bytes.empty()) throw Error(label + ": file is empty, expected an image");
    const std::span<const std::uint8_t> data(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    const Reader reader(data);
    const Format format = detect_format(reader, label);
    if (data.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw Error(label + ": file is " + std::to_string(data.size()) + " bytes, too large to decode");
    }
    const FileInfo info = check_header(reader, format, label);
    // The size the header claims, refused before stb allocates anything (stb's own limit is
    // about 2^30 bytes of pixels, and it reports it as "unknown image type").
    check_size(label, info.width, info.height);
    if (format == Format::jpeg) return decode_jpeg(data, label);

    StbSource src{reinterpret_cast<const stbi_uc*>(data.data()), static_cast<int>(data.size()), 0, 0, format, label};
    int channels = 0;
    if (!stbi_info_from_memory(src.bytes, src.n_bytes, &src.width, &src.height, &channels)) {
        corrupt(label, format, stb_reason());
    }
    // stb 2.27 reports a top-down BMP (rows stored first to last) with its negative height,
    // and loads it the right way up, as Pillow does.
    if (format == Format::bmp) src.height = std::abs(src.height);
    check_size(label, src.width, src.height);
    RgbImage image;
    image.pixels = info.png_grey16 ? decode_grey16(src) : decode_rgb(src, info.gif);
    if (info.bmp16) fix_bmp16(image, *info.bmp16);
    image.width = src.width;
    image.height = src.height;
    return image;
}

RgbImage decode_image_file(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) throw Error(path + ": no such file");
    if (std::filesystem::is_directory(status)) throw Error(path + ": is a directory, expected an image file");
    // A named pipe blocks the read until a writer comes, a device (/dev/zero) never ends it.
    if (!std::filesystem::is_regular_file(status)) throw Error(path + ": not a regular file, expected an image file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open (" + std::generic_category().message(errno) + ")");
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw Error(path + ": read error");
    return decode_image_bytes(std::as_bytes(std::span<const char>(bytes)), path);
}

}   // namespace headscope
