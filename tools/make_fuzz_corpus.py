#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/), a few small
files each. Standard library only; run from anywhere:

    /usr/bin/python3 tools/make_fuzz_corpus.py

Each seed is laid out as its target reads it (tests/fuzz/fuzz_<target>.cpp): header
bytes, then files joined by the separator "\\n--8<--\\n". Valid inputs are the useful
seeds (the fuzzer mutates them into invalid ones); the small tokenizer, checkpoint and
image files come from tests/ where they are small enough, the rest is built here. The
output is deterministic: rerunning rewrites the same bytes.
"""

import json
import pathlib
import random
import shutil
import struct
import zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
CHECKPOINTS = ROOT / "tests" / "checkpoints"
IMAGES = ROOT / "tests" / "images"
SEP = b"\n--8<--\n"

# fuzz_checkpoint.cpp's bases, by their index (byte 0).
BASES = ["", "gpt2_tiny", "gpt2_tiny_f16", "bert_tiny", "bert_tiny_cls", "vit_tiny", "deit_tiny_distilled",
         "deit_tiny_distilled_bf16"]

DTYPES = {"F32": ("<f", 4), "F16": ("<e", 2), "F64": ("<d", 8), "I64": ("<q", 8), "I32": ("<i", 4),
          "U8": ("<B", 1), "BOOL": ("<?", 1), "BF16": (None, 2)}


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, values)] -> the file's bytes (values flat, row-major)."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, values in tensors:
        fmt, size = DTYPES[dtype]
        if dtype == "BF16":
            raw = b"".join(struct.pack("<f", v)[2:] for v in values)   # the top half of a float32
        else:
            raw = b"".join(struct.pack(fmt, v) for v in values)
        assert len(raw) == size * len(values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def weights(rng, spec, dtype="F16"):
    """spec: [(name, shape)] -> small random weights; LayerNorm weights near 1."""
    out = []
    for name, shape in spec:
        parts = name.split(".")
        norm = len(parts) > 1 and ("norm" in parts[-2].lower() or parts[-2].startswith("ln_"))
        base = 1.0 if norm and parts[-1] == "weight" else 0.0
        out.append((name, dtype, shape, [round(base + rng.uniform(-0.5, 0.5), 3) for _ in range(numel(shape))]))
    return safetensors(out)


def compact(path):
    return json.dumps(json.loads(path.read_text()), separators=(",", ":"), ensure_ascii=False).encode()


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def safetensors_seeds(rng):
    write("safetensors", "dtypes", safetensors([
        ("a", "F32", [2, 2], [1.0, -2.0, 0.5, 3.0]),
        ("b", "F16", [3], [0.5, -1.0, 65504.0]),
        ("c", "I64", [1], [-7]),
        ("d", "BOOL", [2], [True, False]),
        ("empty", "F32", [0, 4], []),
    ], {"format": "pt"}))
    write("safetensors", "more_dtypes", safetensors([
        ("x.bf16", "BF16", [2, 1], [1.5, -3.0]),
        ("x.f64", "F64", [1, 2], [1e300, -0.25]),
        ("x.i32", "I32", [2], [2147483647, -1]),
        ("x.u8", "U8", [1, 1, 3], [0, 128, 255]),
        ("x.scalar", "F32", [], [4.0]),
    ]))
    write("safetensors", "header_only", struct.pack("<Q", 2) + b"{}")
    # At the budgets (#31): a name just past 4096 bytes, and many tensors in one header.
    write("safetensors", "long_name", safetensors([("n" * 4097, "F32", [1], [1.0])]))
    write("safetensors", "many_tensors", safetensors([(f"t{i}", "F32", [0], []) for i in range(300)]))


def encoder_layer(prefix, attention, norms, e, inner):
    """The tensors of one BERT / ViT encoder layer (the two name them alike but for the
    attention's and the norms' names): linear weights [out, in] with biases, then norms."""
    spec = []
    for name, shape in [(attention + "query", [e, e]), (attention + "key", [e, e]), (attention + "value", [e, e]),
                        ("attention.output.dense", [e, e]), ("intermediate.dense", [inner, e]),
                        ("output.dense", [e, inner])]:
        spec += [(prefix + name + ".weight", shape), (prefix + name + ".bias", shape[:1])]
    for norm in norms:
        spec += [(prefix + norm + ".weight", [e]), (prefix + norm + ".bias", [e])]
    return spec


def checkpoint_seeds(rng):
    # A valid checkpoint's config (and preprocessor config) against its own weights: byte 0
    # picks the base, byte 1 = 0 runs the plain forward; an empty part keeps the base's file.
    for index, base in enumerate(BASES):
        if not base:
            continue
        parts = [compact(CHECKPOINTS / base / "config.json"), b""]
        if (CHECKPOINTS / base / "preprocessor_config.json").exists():
            parts.append(compact(CHECKPOINTS / base / "preprocessor_config.json"))
        if (CHECKPOINTS / base / "model.safetensors.index.json").exists():
            parts += [b"", compact(CHECKPOINTS / base / "model.safetensors.index.json")]
        flags = 0 if index % 2 else 0x1d   # some with causal, ablation, all stages, export
        write("checkpoint", "config_" + base, bytes([index, flags]) + SEP.join(parts))

    # Whole tiny checkpoints (base 0): E=4, H=2, L=1, F16 weights.
    E, I, V, N = 4, 8, 6, 8
    gpt2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": E, "n_head": 2, "n_layer": 1,
            "n_positions": N, "vocab_size": V, "n_inner": I, "activation_function": "gelu_new",
            "layer_norm_epsilon": 1e-5}
    spec = [("wte.weight", [V, E]), ("wpe.weight", [N, E]), ("ln_f.weight", [E]), ("ln_f.bias", [E])]
    for name, shape in [("ln_1.weight", [E]), ("ln_1.bias", [E]), ("attn.c_attn.weight", [E, 3 * E]),
                        ("attn.c_attn.bias", [3 * E]), ("attn.c_proj.weight", [E, E]), ("attn.c_proj.bias", [E]),
                        ("ln_2.weight", [E]), ("ln_2.bias", [E]), ("mlp.c_fc.weight", [E, I]), ("mlp.c_fc.bias", [I]),
                        ("mlp.c_proj.weight", [I, E]), ("mlp.c_proj.bias", [E])]:
        spec.append(("h.0." + name, shape))
    write("checkpoint", "tiny_gpt2", bytes([0, 0]) + json.dumps(gpt2).encode() + SEP + weights(rng, spec))

    bert = {"model_type": "bert", "architectures": ["BertForSequenceClassification"], "hidden_size": E,
            "num_attention_heads": 2, "num_hidden_layers": 1, "intermediate_size": I, "vocab_size": V,
            "max_position_embeddings": N, "type_vocab_size": 2, "id2label": {"0": "no", "1": "yes"}}
    spec = [("embeddings.word_embeddings.weight", [V, E]), ("embeddings.position_embeddings.weight", [N, E]),
            ("embeddings.token_type_embeddings.weight", [2, E]), ("embeddings.LayerNorm.weight", [E]),
            ("embeddings.LayerNorm.bias", [E]), ("pooler.dense.weight", [E, E]), ("pooler.dense.bias", [E]),
            ("classifier.weight", [2, E]), ("classifier.bias", [2])]
    spec += encoder_layer("encoder.layer.0.", "attention.self.", ["attention.output.LayerNorm", "output.LayerNorm"],
                          E, I)
    tokenizer_config = {"tokenizer_class": "BertTokenizer", "do_lower_case": False}
    write("checkpoint", "tiny_bert", bytes([0, 0x0b]) + SEP.join(
        [json.dumps(bert).encode(), weights(rng, spec), b"", json.dumps(tokenizer_config).encode()]))

    S, P = 8, 4
    T = 1 + (S // P) ** 2
    vit = {"model_type": "vit", "hidden_size": E, "num_attention_heads": 2, "num_hidden_layers": 1,
           "intermediate_size": I, "image_size": S, "patch_size": P, "hidden_act": "gelu", "qkv_bias": True}
    spec = [("vit.embeddings.cls_token", [1, 1, E]), ("vit.embeddings.position_embeddings", [1, T, E]),
            ("vit.embeddings.patch_embeddings.projection.weight", [E, 3, P, P]),
            ("vit.embeddings.patch_embeddings.projection.bias", [E]), ("vit.layernorm.weight", [E]),
            ("vit.layernorm.bias", [E])]
    spec += encoder_layer("vit.encoder.layer.0.", "attention.attention.", ["layernorm_before", "layernorm_after"], E, I)
    preprocessor = {"image_processor_type": "ViTImageProcessor", "size": {"height": S, "width": S}, "resample": 3}
    write("checkpoint", "tiny_vit", bytes([0, 0x30]) + SEP.join(
        [json.dumps(vit).encode(), weights(rng, spec, "BF16"), json.dumps(preprocessor).encode()]))


def bpe_seeds(rng):
    # GPT-2's byte alphabet and 20 merges (tests/checkpoints/gpt2_tiny), then a sentence.
    vocab = compact(CHECKPOINTS / "gpt2_tiny" / "vocab.json")
    merges = (CHECKPOINTS / "gpt2_tiny" / "merges.txt").read_bytes()
    write("bpe", "gpt2_tiny", b"\0" + SEP.join([vocab, merges, "the cat sat, then ate again\n\u00e9 \U0001f600<|endoftext|>  ".encode()]))
    # A hand-made vocabulary that lacks most bytes, with CRLF merges.
    small = {"a": 0, "b": 1, "c": 2, "t": 3, "\u0120": 4, "at": 5, "\u0120c": 6, "\u0120cat": 7, ".": 8,
             "<|endoftext|>": 9}
    write("bpe", "small", b"\0" + SEP.join([json.dumps(small).encode(), "#version: 0.2\r\na t\r\n\u0120 c\r\n\u0120c at\r\n".encode(),
                                            b"cat at a cat.<|endoftext|>cat"]))
    tokenizer = {"version": "1.0", "added_tokens": [{"id": 9, "content": "<|endoftext|>", "special": True},
                                                    {"id": 10, "content": "<pad>", "special": True}],
                 "normalizer": None, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "use_regex": True},
                 "model": {"type": "BPE", "vocab": small, "merges": [["a", "t"], "\u0120 c", ["\u0120c", "at"]],
                           "continuing_subword_prefix": "", "end_of_word_suffix": "", "byte_fallback": False}}
    write("bpe", "tokenizer_json", b"\1" + SEP.join([json.dumps(tokenizer).encode(), b"cat<pad> cat.<|endoftext|>"]))


def wordpiece_seeds(rng):
    vocab = (CHECKPOINTS / "bert_tiny" / "vocab.txt").read_bytes()
    write("wordpiece", "bert_tiny", b"\1" + SEP.join([vocab, "The cat [SEP] sat, on the mat!".encode(),
                                                      "It ran [MASK] away.".encode()]))
    accents = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncafe\n##s\nnaive\n\u6771\n\u4eac\n\u00e9t\u00e9\nstra\n##sse\n\n".encode()
    write("wordpiece", "accents", b"\2" + SEP.join([accents, "Caf\u00e9s NA\u00cfVE \u6771\u4eac \u00c9t\u00e9 stra\u00dfe \u0130\u03a3".encode(),
                                                    "cafe\u0301s\tx\u200b\u2028y".encode()]))
    config = {"tokenizer_class": "BertTokenizerFast", "do_lower_case": True, "strip_accents": False,
              "tokenize_chinese_chars": False}
    write("wordpiece", "config", b"\0" + SEP.join([accents, "Caf\u00e9 \u6771\u4eac".encode(), b"cafes",
                                                   json.dumps(config).encode()]))


def tokenizer_json_seeds(rng):
    # Small tokenizer.json files reaching each component family of the pipeline.
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3, "a": 4, "b": 5, "c": 6, "\u2581a": 7, "ab": 8,
             "<0x0A>": 9, "<0xC3>": 10, "<0xA9>": 11, "1": 12, "2": 13}
    added = [{"id": 0, "content": "<unk>", "special": True, "normalized": False},
             {"id": 1, "content": "<s>", "special": True, "normalized": False},
             {"id": 2, "content": "</s>", "special": True, "normalized": False, "rstrip": True},
             {"id": 14, "content": "[X]", "special": False, "normalized": True, "lstrip": True, "single_word": True}]
    metaspace = {"version": "1.0", "added_tokens": added,
                 "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                                      {"type": "Replace", "pattern": {"String": " "},
                                                                       "content": "\u2581"}]},
                 "pre_tokenizer": None,
                 "post_processor": {"type": "TemplateProcessing",
                                    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                               {"Sequence": {"id": "A", "type_id": 0}}],
                                    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
                 "decoder": {"type": "Sequence", "decoders": [
                     {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                     {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
                 "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True,
                           "vocab": vocab, "merges": ["\u2581 a", "a b"]}}
    write("tokenizer_json", "metaspace", b"\1" + SEP.join([json.dumps(metaspace).encode(),
                                                            "ab a\n\u00e9 [X] z</s> <s>12".encode()]))
    split = {"version": "1.0", "added_tokens": [],
             "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"},
                                                                  {"type": "Strip", "strip_left": True, "strip_right": True}]},
             "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                 {"type": "Split", "pattern": {"Regex": "(?i:'s)|\\p{L}+|\\p{N}{1,3}|\\s+(?!\\S)|\\s+"},
                  "behavior": "Isolated", "invert": False},
                 {"type": "Digits", "individual_digits": True}, {"type": "Punctuation"},
                 {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}]},
             "post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"},
                                                                   {"type": "RobertaProcessing", "sep": ["</s>", 2],
                                                                    "cls": ["<s>", 1]}]},
             "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first"},
             "model": {"type": "BPE", "unk_token": "<unk>", "ignore_merges": True, "vocab": vocab,
                       "merges": [["\u2581", "a"], ["a", "b"]]}}
    write("tokenizer_json", "split", b"\0" + SEP.join([json.dumps(split).encode(), "  AB's 1234 \ufb01 a,b!  ".encode()]))
    wordpiece = {"version": "1.0", "added_tokens": [{"id": 0, "content": "[UNK]", "special": True, "normalized": False}],
                 "normalizer": {"type": "BertNormalizer", "lowercase": True, "strip_accents": None},
                 "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                                         {"type": "Whitespace"}]},
                 "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
                 "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
                 "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                           "max_input_chars_per_word": 100,
                           "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "play": 3, "##ing": 4, "cafe": 5}}}
    config = {"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": True, "add_eos_token": True,
              "bos_token": "[CLS]", "eos_token": {"content": "[SEP]"}}
    write("tokenizer_json", "wordpiece", b"\1" + SEP.join([json.dumps(wordpiece).encode(),
                                                            "Playing CAF\u00c9 \u6771".encode(),
                                                            json.dumps(config).encode()]))


def tokenize_real_seeds(rng):
    text = "Hello world's  don't 123456 \u4f60\u597d <s>[INST] caf\u00e9 \U0001f44b\U0001f3fd\n\n\tx</s>"
    for choice in range(4):
        write("tokenize_real", f"text_{choice}", bytes([choice | 4]) + text.encode())


def demo_text_seeds(rng):
    write("demo_text", "sentence", b"\0The cat sat on the mat. It was happy!")
    write("demo_text", "unicode", "\x0bCaf\u00e9 na\u0131\u0308ve \u6771\u4eac\u90fd \U0001f44d\U0001f3fd "
                                  "\U0001f468\u200d\U0001f469\u200d\U0001f467 e\u0301\u0301 \u00a0x\u2028y\tz".encode())
    write("demo_text", "controls", b"\x0ea\x01b\x7f c\r\nd_e 12.5% <|endoftext|>[SEP]")


def bmp_rgb(width, height):
    row = (width * 3 + 3) // 4 * 4
    pixels = b"".join(bytes((x * 40 + y * 9) % 256 for x in range(width * 3)) + b"\0" * (row - width * 3)
                      for y in range(height))
    header = struct.pack("<2sIHHI", b"BM", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    return header + info + pixels


def tga_rle(width, height):
    header = struct.pack("<BBBHHBHHHHBB", 0, 0, 10, 0, 0, 0, 0, 0, width, height, 24, 0x20)
    body = b""
    for y in range(height):
        body += bytes([0x80 | (width - 1), 10 * y, 200, 30])   # one run per row
    return header + body


def png_rgb(width, height, depth=8, raw=None):
    if raw is None:
        raw = b"".join(b"\0" + bytes((x * 50 + y * 30 + c * 70) % 256 for x in range(width) for c in range(3))
                       for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def image_seeds(rng):
    # Header: flags (resample, model, own resolution, causal, all stages), target width - 1,
    # height - 1, patch size - 1, patch budget - 1.
    write("image", "rgb.png", bytes([0x01, 31, 23, 7, 15]) + png_rgb(12, 10))
    write("image", "rgb.bmp", bytes([0x02, 15, 15, 3, 3]) + bmp_rgb(5, 4))
    write("image", "rle.tga", bytes([0x0c, 63, 63, 15, 63]) + tga_rle(9, 7))
    # At the budgets (#31): image data that inflates past the picture's size (1 MiB for
    # 8x8), and a 16-bit header claiming more decoded samples than allowed.
    write("image", "inflates.png", bytes([0x01, 7, 7, 3, 3]) + png_rgb(8, 8, raw=b"\0" * (1 << 20)))
    write("image", "deep16.png", bytes([0x01, 7, 7, 3, 3]) + png_rgb(11000, 11000, depth=16, raw=b""))
    for name, header in [("grey_1bit.png", [0x03, 7, 7, 1, 0]), ("palette_4bit.png", [0x2d, 63, 31, 7, 8]),
                         ("small_frame_trns.gif", [0x12, 9, 9, 4, 24]), ("progressive.jpg", [0x0e, 99, 99, 9, 99])]:
        write("image", name, bytes(header) + (IMAGES / name).read_bytes())


def mha_seeds(rng):
    def values(n):
        return [round(rng.uniform(-1.0, 1.0), 3) for _ in range(n)]

    E = 4
    packed = safetensors([("in_proj_weight", "F32", [3 * E, E], values(3 * E * E)),
                          ("in_proj_bias", "F32", [3 * E], values(3 * E)),
                          ("out_proj.weight", "F32", [E, E], values(E * E)), ("out_proj.bias", "F32", [E], values(E))])
    x = safetensors([("x", "F32", [2, 3, E], values(2 * 3 * E))])
    keep = safetensors([("keep", "BOOL", [3, 3], [True, False, True, True, True, False, False, False, False])])
    # heads 2; causal, keep, disable heads "1"
    write("mha", "packed_causal_keep", bytes([1, 0x0d]) + SEP.join([packed, x, b"", keep, b"1"]))

    D, Ek = 6, 5
    separate = safetensors([("q_proj.weight", "F16", [D, E], values(D * E)), ("q_proj.bias", "F16", [D], values(D)),
                            ("k_proj.weight", "F16", [D, Ek], values(D * Ek)),
                            ("v_proj.weight", "F16", [D, Ek], values(D * Ek)),
                            ("out_proj.weight", "F16", [E, D], values(E * D))])
    q = safetensors([("x", "BF16", [3, E], values(3 * E))])
    kv = safetensors([("x", "F64", [1, 2, Ek], values(2 * Ek))])
    # heads 3; --kv
    write("mha", "separate_cross", bytes([2, 0x02]) + SEP.join([separate, q, kv]))

    kdim = safetensors([("q_proj_weight", "F32", [E, E], values(E * E)), ("k_proj_weight", "F32", [E, 2], values(E * 2)),
                        ("v_proj_weight", "F32", [E, 2], values(E * 2)), ("out_proj.weight", "F32", [E, E], values(E * E))])
    kv2 = safetensors([("x", "F32", [3, 2], values(6))])
    keep3 = safetensors([("keep", "F32", [2, 1, 3], [1, 0, 1, 0, 0, 0])])
    write("mha", "kdim_vdim", bytes([3, 0x06]) + SEP.join([kdim, safetensors([("x", "F32", [2, 1, E], values(2 * E))]),
                                                          kv2, keep3]))


def main():
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    rng = random.Random(8)
    for make in [safetensors_seeds, checkpoint_seeds, bpe_seeds, wordpiece_seeds, tokenizer_json_seeds,
                 tokenize_real_seeds, demo_text_seeds, image_seeds, mha_seeds]:
        make(rng)
    for folder in sorted(CORPUS.iterdir()):
        files = sorted(folder.iterdir())
        print(f"{folder.relative_to(ROOT)}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
