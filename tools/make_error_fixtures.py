#!/usr/bin/python3
"""Writes tests/errors/: the small bad (and a few good) input files that docs/errors.md's
catalogue runs headscope-cli on. Plain Python (no PyTorch): each file is built byte by
byte, so each is wrong in exactly the one way its name says.

    python3 tools/make_error_fixtures.py
"""

import json
import math
import os
import pathlib
import shutil
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gif_layout import first_image_descriptor  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(ROOT, "tests", "errors")
ROOT_IMAGES = pathlib.Path(ROOT, "tests", "images")


def safetensors(tensors, data_override=None, header_override=None):
    """tensors: name -> (dtype, shape, list of floats). The file's bytes."""
    header, data = {}, b""
    for name, (dtype, shape, values) in tensors.items():
        fmt = {"F32": "<f", "U8": "<B"}[dtype]
        raw = b"".join(struct.pack(fmt, v) for v in values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = (header_override if header_override is not None else json.dumps(header)).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + (data if data_override is None else data_override)


def write(name, content):
    mode = "w" if isinstance(content, str) else "wb"
    with open(os.path.join(OUT, name), mode) as f:
        f.write(content)


def ramp(n, scale=0.1):
    return [((i * 7) % 11 - 5) * scale for i in range(n)]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    E = 4
    weights = {"in_proj_weight": ("F32", [3 * E, E], ramp(3 * E * E)),
               "in_proj_bias": ("F32", [3 * E], ramp(3 * E, 0.01)),
               "out_proj.weight": ("F32", [E, E], ramp(E * E)),
               "out_proj.bias": ("F32", [E], ramp(E, 0.01))}
    write("mha_weights.safetensors", safetensors(weights))
    nan = dict(weights)
    values = ramp(3 * E * E)
    values[5], values[6] = math.nan, math.inf
    nan["in_proj_weight"] = ("F32", [3 * E, E], values)
    write("mha_nan_weights.safetensors", safetensors(nan))
    both = dict(weights)
    both["q_proj.weight"] = ("F32", [E, E], ramp(E * E))
    write("mha_both_layouts.safetensors", safetensors(both))

    write("x_3x4.safetensors", safetensors({"x": ("F32", [3, E], ramp(3 * E))}))
    write("x_3x5.safetensors", safetensors({"x": ("F32", [3, 5], ramp(15))}))
    write("x_named_y.safetensors", safetensors({"y": ("F32", [3, E], ramp(3 * E))}))
    write("x_empty_sequence.safetensors", safetensors({"x": ("F32", [0, E], [])}))
    write("keep_2x2.safetensors", safetensors({"keep": ("U8", [2, 2], [1, 0, 1, 1])}))
    write("keep_named_mask.safetensors", safetensors({"mask": ("U8", [3, 3], [1] * 9)}))

    write("short.safetensors", b"\x05\x00\x00")
    write("header_past_eof.safetensors", struct.pack("<Q", 1_000_000) + b"{}      ")
    write("header_not_json.safetensors", struct.pack("<Q", 16) + b"this is not JSON")
    write("offsets_past_eof.safetensors",
          safetensors({"x": ("F32", [2, E], ramp(2 * E))}, data_override=struct.pack("<ff", 1.0, 2.0)))
    huge = json.dumps({"x": {"dtype": "F32", "shape": [100000, 100000, 3], "data_offsets": [0, 120_000_000_000]}})
    write("huge_tensor.safetensors", safetensors({}, data_override=b"\0" * 16, header_override=huge))
    odd = json.dumps({"x": {"dtype": "C64", "shape": [3, E], "data_offsets": [0, 96]}})
    write("unknown_dtype.safetensors", safetensors({}, data_override=b"\0" * 96, header_override=odd))

    write("nul.txt", b"the cat\0sat on the mat\n")
    write("invalid_utf8.txt", b"caf\xc3\x28 au lait\n")
    write("sentence.txt", "The cat sat on the mat because it was warm.\n")

    # A GPT-2 checkpoint with NaN in one weight: a warning, and the model still opens.
    source = os.path.join(ROOT, "tests", "checkpoints", "gpt2_tiny")
    folder = os.path.join(OUT, "gpt2_nan")
    shutil.copytree(source, folder)
    path = os.path.join(folder, "model.safetensors")
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    entry = header["h.0.attn.c_attn.weight"] if "h.0.attn.c_attn.weight" in header else header["transformer.h.0.attn.c_attn.weight"]
    assert entry["dtype"] == "F32"
    at = 8 + n + entry["data_offsets"][0]
    blob[at:at + 4] = struct.pack("<f", math.nan)
    with open(path, "wb") as f:
        f.write(blob)

    # Tokenizer folders (headscope-cli tokenize), each a small byte-level BPE tokenizer.json
    # with one thing wrong.
    def tokenizer_json(**changes):
        chars = {"\u0120": 0, "a": 1, "b": 2, "c": 3, "t": 4, "at": 5, "\u0120c": 6}
        base = {"version": "1.0", "added_tokens": [{"id": 7, "content": "<|endoftext|>", "special": True,
                                                    "normalized": False}],
                "normalizer": None,
                "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
                "post_processor": None, "decoder": {"type": "ByteLevel"},
                "model": {"type": "BPE", "vocab": chars, "merges": ["a t", "\u0120 c"]}}
        for path, value in changes.items():
            target = base
            keys = path.split("__")
            for key in keys[:-1]:
                target = target[key]
            target[keys[-1]] = value
        return json.dumps(base, ensure_ascii=False, indent=1)

    tokenizers = {
        "not_json": '{"version": "1.0", "model": {"type": "BPE",\n',
        "model_type": tokenizer_json(model__type="SentencePiece"),
        "missing_merge": tokenizer_json(model__merges=["a t", "c x"]),
        "bad_regex": tokenizer_json(pre_tokenizer={"type": "Split", "pattern": {"Regex": "\\p{L}+|(\\d"},
                                                   "behavior": "Isolated", "invert": False}),
        "id_collision": tokenizer_json(added_tokens=[{"id": 3, "content": "<|endoftext|>", "special": True}]),
        "duplicate_key": tokenizer_json().replace('"version": "1.0",', '"version": "1.0", "version": "2.0",', 1),
    }
    for name, text in tokenizers.items():
        os.makedirs(os.path.join(OUT, "tokenizer_" + name))
        write(os.path.join("tokenizer_" + name, "tokenizer.json"), text)

    # config.json with a NUL byte and garbage after it (JSON parsers stop at the NUL), and
    # with a key given twice (JSON keeps the last silently); a safetensors header with a NUL.
    source_config = os.path.join(ROOT, "tests", "checkpoints", "gpt2_tiny", "config.json")
    with open(source_config, "rb") as f:
        config = f.read()
    for name, content in [("config_nul", config.rstrip() + b"\0 garbage"),
                          ("config_duplicate_key", config.replace(b'"n_layer"', b'"n_layer": 9, "n_layer"', 1))]:
        folder = os.path.join(OUT, name)
        shutil.copytree(os.path.join(ROOT, "tests", "checkpoints", "gpt2_tiny"), folder)
        with open(os.path.join(folder, "config.json"), "wb") as f:
            f.write(content)
    header = b'{"x": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}}'
    write("header_nul.safetensors", struct.pack("<Q", len(header) + 10) + header + b"\0{not json" + b"\0" * 48)

    # PNGs that would take far more memory decoded than their files take on disk: a 32x32
    # RGB picture whose image data inflates to 64 MiB (3,104 bytes are all its size needs),
    # and a header claiming 11000x11000 at 16 bits per sample (692 MiB of samples).
    def png_chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    def png(width, height, depth, idat):
        ihdr = struct.pack(">IIBBBBB", width, height, depth, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat)
                + png_chunk(b"IEND", b""))

    # A tensor whose name is 10,000 bytes: messages show it cut to 120 characters.
    write("long_name.safetensors", safetensors({"w" * 10000: ("F32", [2], [0.5, 0.25])}))

    # A GIF whose first image claims an LZW code size of 13 (codes stop at 12 bits: Pillow
    # refuses it, stb_image gives up on it without saying why).
    gif = bytearray((ROOT_IMAGES / "anim.gif").read_bytes())
    at = first_image_descriptor(gif)
    local = gif[at + 9]
    at += 10 + (3 * (2 << (local & 7)) if local & 0x80 else 0)
    gif[at] = 13
    write("gif_lzw_13.gif", bytes(gif))

    write("inflation_bomb.png", png(32, 32, 8, zlib.compress(b"\0" * (64 << 20), 9)))
    write("deep_16bit.png", png(11000, 11000, 16, zlib.compress(b"")))

    # A folder whose config.json is not JSON.
    os.makedirs(os.path.join(OUT, "config_not_json"))
    write(os.path.join("config_not_json", "config.json"), '{"model_type": "gpt2", "n_layer": 2,\n')
    print("wrote", OUT)


if __name__ == "__main__":
    main()
