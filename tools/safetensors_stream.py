"""safetensors files too big to hold in memory: a writer that takes each tensor as a
stream of row chunks, and a reader that upcasts tensor by tensor.

Used by tools/make_full_size_checkpoints.py (multi-GB BF16 checkpoints written while
holding one chunk at a time) and tools/bench_vs_torch.py (the PyTorch side loads them as
from_pretrained(torch_dtype=float32) would: every tensor upcast to float32, the 16-bit
file never resident as a whole). The file layout is make_golden.save_safetensors': an
8-byte little-endian header length, the JSON header (tensors sorted by name, metadata
first) padded with spaces to 8 bytes, then the raw little-endian data in header order.
"""

import json
import math
import os
import struct

# torch and numpy are imported where they are used: tools/bench_vs_torch.py counts
# parameters with this module in its parent process, whose peak RSS its children would
# inherit (Linux keeps ru_maxrss across execve, and `headscope-cli bench` reports its own).

DTYPE_SIZES = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8, "I32": 4, "U8": 1, "BOOL": 1}
FLOATS = ("F32", "F16", "BF16")


def torch_dtype(name):
    import torch

    return {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}[name]


def nbytes(dtype, shape):
    return DTYPE_SIZES[dtype] * math.prod(shape)


def write_streamed(path, entries, metadata=None):
    """entries: [(name, dtype, shape, chunks)] where `chunks()` yields contiguous tensors
    of that dtype whose bytes, concatenated, are the tensor's. Writes to PATH.partial and
    renames it when complete, so an interrupted run leaves no file that looks finished.
    Returns the bytes of tensor data written."""
    by_name = {name: (dtype, list(shape), chunks) for name, dtype, shape, chunks in entries}
    if len(by_name) != len(entries):
        raise ValueError(f"{path}: duplicate tensor names")
    import torch

    header = {"__metadata__": metadata} if metadata else {}
    offset = 0
    for name in sorted(by_name):
        dtype, shape, _ = by_name[name]
        size = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    partial = path + ".partial"
    with open(partial, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name in sorted(by_name):
            dtype, shape, chunks = by_name[name]
            written = 0
            for chunk in chunks():
                if chunk.dtype != torch_dtype(dtype) or not chunk.is_contiguous():
                    raise ValueError(f"{name}: chunk is {chunk.dtype}, contiguous {chunk.is_contiguous()}")
                raw = chunk.view(torch.int16) if dtype == "BF16" else chunk
                f.write(raw.numpy().data)
                written += chunk.numel() * DTYPE_SIZES[dtype]
            if written != nbytes(dtype, shape):
                raise ValueError(f"{name}: wrote {written} bytes for shape {shape} {dtype}")
    os.replace(partial, path)
    return offset


def read_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n)), 8 + n


def checkpoint_files(folder):
    """The weight files of a Hugging Face folder: model.safetensors, or the shards its
    model.safetensors.index.json names."""
    single = os.path.join(folder, "model.safetensors")
    if os.path.exists(single):
        return [single]
    with open(os.path.join(folder, "model.safetensors.index.json")) as f:
        index = json.load(f)
    return [os.path.join(folder, name) for name in sorted(set(index["weight_map"].values()))]


def count_parameters(folder):
    """Elements stored in the folder's weight files (a tied head is stored once)."""
    total = 0
    for path in checkpoint_files(folder):
        header, _ = read_header(path)
        total += sum(math.prod(e["shape"]) for k, e in header.items() if k != "__metadata__")
    return total


def load_float32(folder):
    """{stored name: float32 tensor} for a checkpoint folder, reading and upcasting one
    tensor at a time (peak: the float32 weights plus one tensor's stored bytes)."""
    import numpy as np
    import torch

    out = {}
    for path in checkpoint_files(folder):
        header, start = read_header(path)
        with open(path, "rb") as f:
            for name, e in header.items():
                if name == "__metadata__":
                    continue
                if e["dtype"] not in FLOATS:
                    raise ValueError(f"{path}: {name} is {e['dtype']}; floating tensors only")
                begin, end = e["data_offsets"]
                f.seek(start + begin)
                buf = bytearray(end - begin)   # writable, so torch can share it without a copy
                if f.readinto(buf) != len(buf):
                    raise ValueError(f"{path}: {name} runs past the end of the file")
                # numpy has no bfloat16: 16-bit data is read as int16, then reinterpreted by torch
                t = torch.from_numpy(np.frombuffer(buf, dtype=np.float32 if e["dtype"] == "F32" else np.int16))
                if e["dtype"] != "F32":
                    t = t.view(torch_dtype(e["dtype"]))
                out[name] = t.float().reshape(e["shape"])
                del buf, t
    return out
