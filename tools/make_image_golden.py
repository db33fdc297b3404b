#!/usr/bin/python3
"""Writes the test images and the image golden files: tests/images/, tests/golden/images/.

Run with Debian's Pillow, NumPy and PyTorch:  /usr/bin/python3 tools/make_image_golden.py

tests/images/            small images in every format core/image/image.h decodes, drawn from
                         gradients + noise + sharp edges (what resampling gets wrong)
tests/images/broken/     files that must be refused (each is checked to fail in Pillow too)
tests/golden/images/
  decode.safetensors     per image, Image.open(f).convert("RGB")          U8 [H, W, 3]
  resize.safetensors     Image.resize((W, H), filter) of a decoded image   U8 [H, W, 3]
  normalize.safetensors  (pixel * rescale - mean) / std, channels first    F32 [3, H * W]
  patch.safetensors      of normalize's "rgb.png:vit": patchify [N, 3 * P * P], and
                         torch.nn.Conv2d(3, E, P, stride=P) -> [N, E] with its weights
  cases.json             the manifest the C++ tests walk

Everything is seeded and deterministic. The reference is Pillow's and PyTorch's own
arithmetic: nothing here calls Headscope.
"""

import io
import json
import os
import struct
import sys
import warnings
import zlib

import numpy as np
import PIL
import torch
import torch.nn as nn
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)
from gif_layout import first_image_descriptor  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
IMAGE_DIR = os.path.join(ROOT, "tests", "images")
BROKEN_DIR = os.path.join(IMAGE_DIR, "broken")
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "images")

RESAMPLE = {
    "nearest": Image.Resampling.NEAREST,
    "bilinear": Image.Resampling.BILINEAR,
    "bicubic": Image.Resampling.BICUBIC,
    "lanczos": Image.Resampling.LANCZOS,
}

# --------------------------------------------------------------------------------------
# picture content


def picture(width, height, seed):
    """[H, W, 3] uint8: gradients (smooth areas), noise, a 1-pixel checkerboard and
    hard-edged rectangles (ringing and aliasing), all from one seed."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    r = 255.0 * x / max(width - 1, 1)
    g = 255.0 * y / max(height - 1, 1)
    b = 127.5 + 127.5 * np.sin((x + 2 * y) / 5.0)
    img = np.stack([r, g, b], axis=-1) + rng.normal(0.0, 14.0, (height, width, 3))
    img[height // 5: height // 2, width // 6: width // 3] = (255, 255, 255)
    img[height // 2: height * 4 // 5, width // 2: width * 3 // 4] = (0, 0, 0)
    checker = ((x + y) % 2 == 0)[..., None]
    band = (slice(height * 4 // 5, height), slice(width * 3 // 4, width))
    img[band] = np.where(checker[band], 250.0, 5.0)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def alpha_plane(width, height, seed):
    """[H, W] uint8 alpha covering 0 (fully transparent: colour must survive) to 255."""
    rng = np.random.default_rng(seed)
    a = np.linspace(0, 255, width)[None, :] * np.ones((height, 1))
    a = a + rng.normal(0.0, 30.0, (height, width))
    a[:, :3] = 0
    return np.clip(np.rint(a), 0, 255).astype(np.uint8)


# --------------------------------------------------------------------------------------
# PNG by hand: Pillow writes no 16-bit colour PNGs, and the broken files need raw chunks


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(pixels, color_type, depth):
    """pixels [H, W] or [H, W, C] of uint8 / uint16 -> PNG, filter 0 on every row."""
    height, width = pixels.shape[:2]
    dtype = ">u2" if depth == 16 else "u1"
    raw = b"".join(b"\0" + pixels[row].astype(dtype).tobytes() for row in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", zlib.compress(raw, 9))
            + png_chunk(b"IEND", b""))


def png_header_only(width, height):
    """A well-formed PNG header (valid CRCs) claiming width x height, with one empty IDAT:
    readers must refuse it from the header, before allocating anything."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", zlib.compress(b""))
            + png_chunk(b"IEND", b""))


def bmp16_bytes(values, bitfields):
    """values [H, W] uint16 -> 16-bit BMP (bottom-up), 5-5-5 without bitfields, else 5-6-5:
    Pillow scales 5 and 6-bit channels by v * 255 / 31 (or 63), not by bit replication."""
    height, width = values.shape
    row_bytes = (width * 2 + 3) // 4 * 4
    rows = b"".join(values[row].astype("<u2").tobytes().ljust(row_bytes, b"\0") for row in range(height - 1, -1, -1))
    masks = struct.pack("<III", 0xF800, 0x07E0, 0x001F) if bitfields else b""
    offset = 14 + 40 + len(masks)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 16, 3 if bitfields else 0, len(rows), 2835, 2835, 0, 0)
    return struct.pack("<2sIHHI", b"BM", offset + len(rows), 0, 0, offset) + info + masks + rows


def bmp_top_down(data):
    """A bottom-up 24-bit BMP rewritten top-down: rows first to last, the height negative
    (BITMAPINFOHEADER allows it; Pillow reads it the right way up)."""
    out = bytearray(data)
    offset, = struct.unpack_from("<I", out, 10)
    width, height = struct.unpack_from("<ii", out, 18)
    row_bytes = (width * 3 + 3) // 4 * 4
    rows = [bytes(out[offset + i * row_bytes: offset + (i + 1) * row_bytes]) for i in range(height)]
    out[offset:offset + height * row_bytes] = b"".join(reversed(rows))
    struct.pack_into("<i", out, 22, -height)
    return bytes(out)


def gif_on_larger_screen(data, screen_width, screen_height, left, top, background):
    """A one-frame GIF moved onto a larger logical screen at (left, top): the pixels
    around the frame are not drawn by the file, and readers fill them differently."""
    out = bytearray(data)
    struct.pack_into("<HH", out, 6, screen_width, screen_height)
    out[11] = background
    struct.pack_into("<HH", out, first_image_descriptor(out) + 1, left, top)
    return bytes(out)


def encode(im, fmt, **params):
    buf = io.BytesIO()
    im.save(buf, fmt, **params)
    return buf.getvalue()


# --------------------------------------------------------------------------------------
# the files


def make_images():
    """{relative file name: bytes} of every test image."""
    files = {}
    big = picture(64, 48, seed=1)            # [48, 64, 3]: resize, normalize, patch source
    small = picture(37, 29, seed=2)          # [29, 37, 3]: odd sizes
    alpha = alpha_plane(37, 29, seed=3)
    rgb_small = Image.fromarray(small, "RGB")
    grey_small = rgb_small.convert("L")
    palette_small = rgb_small.quantize(colors=60, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)

    # PNG, 8-bit and below
    files["rgb.png"] = encode(Image.fromarray(big, "RGB"), "PNG")
    files["rgb_small.png"] = encode(rgb_small, "PNG")
    rgba = np.dstack([small, alpha])
    files["rgba.png"] = encode(Image.fromarray(rgba, "RGBA"), "PNG")
    files["grey.png"] = encode(grey_small, "PNG")
    la = np.dstack([np.asarray(grey_small), alpha])
    files["grey_alpha.png"] = encode(Image.fromarray(la, "LA"), "PNG")
    files["grey_1bit.png"] = encode(grey_small.point(lambda v: 255 if v > 127 else 0).convert("1"), "PNG")
    files["palette.png"] = encode(palette_small, "PNG")
    files["palette_4bit.png"] = encode(rgb_small.quantize(colors=16, dither=Image.Dither.NONE), "PNG", bits=4)
    # One fully transparent index (tRNS of one zero), and a tRNS of many alpha levels.
    files["palette_trns.png"] = encode(palette_small, "PNG", transparency=7)
    files["palette_alpha.png"] = encode(palette_small, "PNG", transparency=bytes(range(0, 240, 4)))

    # PNG, 16-bit (by hand): grey values straddle 255 because Pillow clips them there.
    rng = np.random.default_rng(4)
    grey16 = rng.integers(0, 520, (29, 37)).astype(np.uint16)
    grey16[0, :8] = [0, 1, 254, 255, 256, 257, 4096, 65535]
    files["grey16.png"] = png_bytes(grey16, 0, 16)
    files["grey_alpha16.png"] = png_bytes(rng.integers(0, 65536, (29, 37, 2)).astype(np.uint16), 4, 16)
    rgb16 = small.astype(np.uint16) * 257 + rng.integers(0, 257, (29, 37, 3)).astype(np.uint16)
    files["rgb16.png"] = png_bytes(rgb16, 2, 16)
    files["rgba16.png"] = png_bytes(np.dstack([rgb16, alpha.astype(np.uint16) * 257]), 6, 16)

    # JPEG: 4:2:0 baseline and progressive (libjpeg-turbo in Pillow), and greyscale
    files["baseline.jpg"] = encode(Image.fromarray(big, "RGB"), "JPEG", quality=90)
    files["progressive.jpg"] = encode(rgb_small, "JPEG", quality=85, progressive=True)
    files["grey.jpg"] = encode(grey_small, "JPEG", quality=90)

    # BMP: 24-bit, 8-bit palette and 16-bit bottom-up, and 24-bit top-down
    files["rgb.bmp"] = encode(rgb_small, "BMP")
    files["rgb_top_down.bmp"] = bmp_top_down(files["rgb.bmp"])
    files["palette.bmp"] = encode(palette_small, "BMP")
    files["rgb555.bmp"] = bmp16_bytes(rng.integers(0, 1 << 15, (29, 37)).astype(np.uint16), bitfields=False)
    files["rgb565.bmp"] = bmp16_bytes(rng.integers(0, 1 << 16, (29, 37)).astype(np.uint16), bitfields=True)

    # GIF: two frames, the first is what is decoded; and one whose first frame has a
    # transparent index (Pillow shows that index's palette colour).
    frame1 = palette_small
    frame2 = Image.fromarray(255 - small, "RGB").quantize(colors=60, dither=Image.Dither.NONE)
    files["anim.gif"] = encode(frame1, "GIF", save_all=True, append_images=[frame2], duration=100, loop=0)
    files["anim_trns.gif"] = encode(frame1, "GIF", save_all=True, append_images=[frame2], duration=100,
                                    transparency=3, disposal=2)

    # The first frame smaller than the screen: Pillow fills around it with the transparent
    # index, or index 0 when there is none, whatever the background index says.
    patch = Image.fromarray(small[:15, :20], "RGB").quantize(colors=30, dither=Image.Dither.NONE)
    files["small_frame.gif"] = gif_on_larger_screen(encode(patch, "GIF"), 37, 29, 9, 6, background=5)
    files["small_frame_trns.gif"] = gif_on_larger_screen(encode(patch, "GIF", transparency=4), 37, 29, 9, 6,
                                                         background=5)

    # TGA: uncompressed and run-length encoded; RGB, RGBA, grey + alpha, colour-mapped
    files["rgb.tga"] = encode(rgb_small, "TGA")
    files["rgb_rle.tga"] = encode(rgb_small, "TGA", compression="tga_rle")
    files["rgba.tga"] = encode(Image.fromarray(rgba, "RGBA"), "TGA")
    files["grey_alpha.tga"] = encode(Image.fromarray(la, "LA"), "TGA")
    files["palette.tga"] = encode(palette_small, "TGA")
    return files


def make_broken(files):
    """{file name: (bytes, what the error message must mention)}."""
    png = files["rgb.png"]
    idat = png.index(b"IDAT")
    corrupt = bytearray(png)
    for i in range(idat + 40, idat + 60):
        corrupt[i] ^= 0x5A
    jpeg = files["baseline.jpg"]
    rng = np.random.default_rng(5)
    return {
        "truncated.png": (png[: len(png) // 2], "truncated"),
        "truncated.jpg": (jpeg[: len(jpeg) * 3 // 5], "truncated"),
        "truncated.gif": (files["anim.gif"][:1000], "truncated"),
        "truncated.bmp": (files["rgb.bmp"][: len(files["rgb.bmp"]) - 100], "truncated"),
        "corrupt.png": (bytes(corrupt), "corrupt"),
        "garbage.jpg": (b"\xff\xd8\xff" + rng.integers(0, 256, 600).astype(np.uint8).tobytes(), "corrupt"),
        "empty.png": (b"", "empty"),
        "text.png": (b"This is a text file, not a picture.\n", "unsupported"),
        "huge.png": (png_header_only(20000, 20000), "20000x20000"),
        "zero_width.png": (png_header_only(0, 29), "zero"),
    }


def pillow_rgb(data):
    with warnings.catch_warnings():
        # "Palette images with Transparency expressed in bytes should be converted to RGBA"
        warnings.simplefilter("ignore")
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def pillow_refuses(data):
    try:
        pillow_rgb(data)
    except Exception:  # noqa: BLE001  (any failure counts: OSError, SyntaxError, DecompressionBombError)
        return True
    return False


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    torch.manual_seed(2024)
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    files = make_images()
    broken = make_broken(files)
    manifest = {"generator": "tools/make_image_golden.py", "pillow": PIL.__version__, "torch": torch.__version__,
                "decode": [], "broken": [], "resize": [], "normalize": [], "patch": []}

    decoded = {}
    for name, data in files.items():
        write(os.path.join(IMAGE_DIR, name), data)
        decoded[name] = pillow_rgb(data)
        manifest["decode"].append({"file": name, "tensor": name, "jpeg": name.endswith(".jpg")})
    save_safetensors(os.path.join(GOLDEN_DIR, "decode.safetensors"),
                     {name: torch.from_numpy(px.copy()) for name, px in decoded.items()})

    for name, (data, mentions) in broken.items():
        assert pillow_refuses(data), f"Pillow accepts broken/{name}"
        write(os.path.join(BROKEN_DIR, name), data)
        manifest["broken"].append({"file": "broken/" + name, "mentions": mentions})

    # Resize: shrink (non-integer factors), enlarge, one side only (Pillow skips the other
    # pass), same size (a copy), and a 224 x 224 model input. 224 x 224 only for the two
    # filters ViT / CLIP processors use, to keep the files small.
    resize_cases = [("rgb.png", w, h) for (w, h) in
                    [(24, 20), (17, 13), (100, 77), (64, 20), (24, 48), (50, 61), (1, 1), (64, 48), (7, 96)]]
    resize_cases += [("rgb_small.png", w, h) for (w, h) in [(10, 7), (36, 30)]]
    resize_out = {}
    for filter_name, resample in RESAMPLE.items():
        cases = resize_cases + ([("rgb_small.png", 224, 224)] if filter_name in ("bilinear", "bicubic") else [])
        for source, width, height in cases:
            src = Image.fromarray(decoded[source], "RGB")
            out = np.asarray(src.resize((width, height), resample))
            tensor = f"{source}:{filter_name}:{width}x{height}"
            resize_out[tensor] = torch.from_numpy(out.copy())
            manifest["resize"].append({"source": source, "filter": filter_name, "width": width, "height": height,
                                       "tensor": tensor})
    save_safetensors(os.path.join(GOLDEN_DIR, "resize.safetensors"), resize_out)

    # Normalize as Hugging Face's image processors: rescale, then (x - mean) / std, float32.
    norms = {"vit": (1 / 255, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),
             "imagenet": (1 / 255, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}
    norm_out = {}
    for source in ("rgb.png",):
        x = torch.from_numpy(decoded[source].copy()).permute(2, 0, 1).float()     # [3, H, W]
        for norm_name, (rescale, mean, std) in norms.items():
            y = (x * rescale - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None]
            tensor = f"{source}:{norm_name}"
            norm_out[tensor] = y.reshape(3, -1).contiguous()
            manifest["normalize"].append({"source": source, "rescale": rescale, "mean": mean, "std": std,
                                          "tensor": tensor})
    save_safetensors(os.path.join(GOLDEN_DIR, "normalize.safetensors"), norm_out)

    # Patches and the patch embedding of the ViT-normalised 64 x 48 image (its input is
    # normalize.safetensors "rgb.png:vit").
    pixels = norm_out["rgb.png:vit"].reshape(3, 48, 64)                            # [3, H, W]
    patch_out = {}
    embed_dim = 12
    for p in (8, 16):
        conv = nn.Conv2d(3, embed_dim, p, stride=p)
        with torch.no_grad():
            nn.init.normal_(conv.bias, std=0.5)
            embed = conv(pixels[None])[0].flatten(1).transpose(0, 1)               # [N, E]
            embed_nobias = torch.nn.functional.conv2d(pixels[None], conv.weight, None, stride=p)[0]
            embed_nobias = embed_nobias.flatten(1).transpose(0, 1)                 # [N, E]
        patches = pixels.reshape(3, 48 // p, p, 64 // p, p).permute(1, 3, 0, 2, 4).reshape(-1, 3 * p * p)
        patch_out[f"weight_p{p}"] = conv.weight.detach().contiguous()              # [E, 3, P, P]
        patch_out[f"bias_p{p}"] = conv.bias.detach().contiguous()                  # [E]
        patch_out[f"patches_p{p}"] = patches.contiguous()                          # [N, 3 * P * P]
        patch_out[f"embed_p{p}"] = embed.contiguous()                              # [N, E]
        patch_out[f"embed_nobias_p{p}"] = embed_nobias.contiguous()                # [N, E]
        manifest["patch"].append({"patch_size": p, "embed_dim": embed_dim})
    save_safetensors(os.path.join(GOLDEN_DIR, "patch.safetensors"), patch_out)

    with open(os.path.join(GOLDEN_DIR, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(d, n)) for top in (IMAGE_DIR, GOLDEN_DIR)
                for d, _, names in os.walk(top) for n in names)
    print(f"wrote {len(files)} images, {len(broken)} broken files, {len(manifest['resize'])} resize cases "
          f"({total / 1024:.0f} KiB in all)")


if __name__ == "__main__":
    sys.exit(main())
