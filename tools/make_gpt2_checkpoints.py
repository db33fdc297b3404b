#!/usr/bin/python3
"""Writes tiny GPT-2 checkpoints in Hugging Face's folder layout, what PyTorch computes
from them, and broken checkpoints that must be refused.

Run with Debian's PyTorch (python3-torch):

    /usr/bin/python3 tools/make_gpt2_checkpoints.py

tests/checkpoints/
  gpt2_tiny/          GPT2LMHeadModel (F32, "transformer." prefix, lm_head.weight stored,
                      equal to wte), E=16 H=2 L=2, n_positions 32; vocab.json + merges.txt:
                      GPT-2's 256 byte tokens (in bytes_to_unicode order), 20 merges learnt
                      here from a small corpus, and <|endoftext|> (V = 277)
  gpt2_tiny_f16/      the same weights in F16, GPT2Model names (no prefix, no lm_head), with
                      the attn.bias / attn.masked_bias buffers older transformers saved
  gpt2_tiny_bf16/     the same weights in BF16, "transformer." prefix, LM head tied (not stored)
  bad/gpt2_*/         each must fail with one line (see tests/cli/test_cli_gpt2.cpp)
tests/golden/gpt2/
  <case>.safetensors  attn.L [H, T, T] for every layer, logits [T, V], input_ids [T]
  cases.json          the manifest the C++ test walks

The reference is `Gpt2` below, written from the published architecture (Radford et al.
2019; transformers' modeling_gpt2.py): Conv1D (x W + b, W stored [in, out]), pre-LN
blocks, causal attention, gelu_new, final ln_f, LM head tied to wte. F16 weights are
upcast to float32, as transformers' from_pretrained does by default. The tokenizer
reference is GPT-2's encoder.py BPE with its regex restricted to ASCII (the --text case
is ASCII). Nothing here calls Headscope.
"""

import json
import math
import os
import re
import shutil
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CHECKPOINT_DIR = os.path.join(ROOT, "tests", "checkpoints")
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "gpt2")

E, H, L, N_POSITIONS, N_MERGES = 16, 2, 2, 32, 20
CORPUS = "the cat sat on the mat. the dog ate the hat, then the cat sat there again and then the end."
TEXT = "the cat sat on the mat, then the dog ate it"
TOKENS = [84, 104, 101, 258, 5, 270, 100, 276, 0, 32, 200]


# --------------------------------------------------------------------------------------
# tokenizer: GPT-2's byte-level BPE (encoder.py)


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


# GPT-2's pattern with \p{L} / \p{N} as ASCII classes: exact for ASCII text.
PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
BYTE_ENCODER = bytes_to_unicode()


def pieces(text):
    return ["".join(BYTE_ENCODER[b] for b in p.encode("utf-8")) for p in PATTERN.findall(text)]


def learn_merges(corpus, n):
    words = {}
    for p in pieces(corpus):
        words[tuple(p)] = words.get(tuple(p), 0) + 1
    return merges_over(words, n)


def merges_over(words, n):
    """Up to n BPE merges over words {tuple of symbols: count}: the most frequent adjacent
    pair first, ties broken by the pair's text (make_decoder_checkpoints.py uses it too)."""
    merges = []
    for _ in range(n):
        counts = {}
        for w, c in words.items():
            for pair in zip(w, w[1:]):
                counts[pair] = counts.get(pair, 0) + c
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        merged = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + c
        words = merged
    return merges


def bpe(token, ranks):
    """encoder.py's bpe(): merge the lowest-ranked adjacent pair until none is ranked."""
    word = list(token)
    while len(word) > 1:
        first, second = min(zip(word, word[1:]), key=lambda pair: ranks.get(pair, math.inf))
        if (first, second) not in ranks:
            break
        out, i = [], 0
        while i < len(word):
            if i + 1 < len(word) and word[i] == first and word[i + 1] == second:
                out.append(first + second)
                i += 2
            else:
                out.append(word[i])
                i += 1
        word = out
    return word


def encode(text, vocab, ranks):
    ids = []
    for p in pieces(text):
        ids.extend(vocab[t] for t in bpe(p, ranks))
    return ids


def build_tokenizer():
    vocab = {}
    for b, ch in BYTE_ENCODER.items():   # bytes_to_unicode order, as GPT-2's encoder.json
        vocab[ch] = len(vocab)
    merges = learn_merges(CORPUS, N_MERGES)
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return vocab, merges


# --------------------------------------------------------------------------------------
# reference model


class Conv1D(nn.Module):
    """transformers' Conv1D: y = x W + b with W stored [in, out]."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.empty(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Block(nn.Module):
    def __init__(self, e, h, inner, eps):
        super().__init__()
        self.h = h
        self.ln_1 = nn.LayerNorm(e, eps=eps)
        self.attn = nn.Module()
        self.attn.c_attn = Conv1D(e, 3 * e)
        self.attn.c_proj = Conv1D(e, e)
        self.ln_2 = nn.LayerNorm(e, eps=eps)
        self.mlp = nn.Module()
        self.mlp.c_fc = Conv1D(e, inner)
        self.mlp.c_proj = Conv1D(inner, e)

    def forward(self, x, causal):
        *batch, t, e = x.shape   # [T, E], or [B, T, E] when training (tools/train_text.py)
        dh = e // self.h
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(e, dim=-1)
        q, k, v = (z.view(*batch, t, self.h, dh).transpose(-2, -3) for z in (q, k, v))   # [..., H, T, Dh]
        scores = q @ k.transpose(-1, -2) / math.sqrt(dh)
        if causal:
            allowed = torch.ones(t, t, dtype=torch.bool).tril()
            scores = torch.where(allowed, scores, torch.tensor(torch.finfo(scores.dtype).min))
        weights = scores.softmax(-1)
        context = (weights @ v).transpose(-2, -3).reshape(*batch, t, e)
        x = x + self.attn.c_proj(context)
        x = x + self.mlp.c_proj(gelu_new(self.mlp.c_fc(self.ln_2(x))))
        return x, weights


class Gpt2(nn.Module):
    def __init__(self, v, e, h, l, n_positions, eps=1e-5):
        super().__init__()
        self.wte = nn.Embedding(v, e)
        self.wpe = nn.Embedding(n_positions, e)
        self.h = nn.ModuleList([Block(e, h, 4 * e, eps) for _ in range(l)])
        self.ln_f = nn.LayerNorm(e, eps=eps)

    def forward(self, ids, causal=True):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[-1]))
        attentions = []
        for block in self.h:
            x, a = block(x, causal)
            attentions.append(a)
        x = self.ln_f(x)
        return attentions, x @ self.wte.weight.T   # the LM head, tied to wte


# --------------------------------------------------------------------------------------
# writing folders


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def config(v):
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": v, "n_positions": N_POSITIONS,
            "n_ctx": N_POSITIONS, "n_embd": E, "n_layer": L, "n_head": H, "n_inner": None,
            "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "bos_token_id": v - 1,
            "eos_token_id": v - 1, "scale_attn_weights": True}


def write_folder(name, cfg, tensors, vocab=None, merges=None):
    folder = os.path.join(CHECKPOINT_DIR, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    write_json(os.path.join(folder, "config.json"), cfg)
    save_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})
    if vocab is not None:
        write_json(os.path.join(folder, "vocab.json"), vocab)
        with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n")
            for a, b in merges:
                f.write(f"{a} {b}\n")
    return folder


CASES = []


def record(name, checkpoint, model, ids, text, labels, stored_dtype):
    with torch.no_grad():
        attentions, logits = model(torch.tensor(ids))
    tensors = {f"attn.{l}": a.contiguous() for l, a in enumerate(attentions)}
    tensors["logits"] = logits.contiguous()
    tensors["input_ids"] = torch.tensor(ids, dtype=torch.int64)
    for a in attentions:
        assert torch.isfinite(a).all() and torch.allclose(a.sum(-1), torch.ones(()), atol=1e-5)
        assert (a.triu(1) == 0).all()
    save_safetensors(os.path.join(GOLDEN_DIR, name + ".safetensors"), tensors)
    case = {"name": name, "checkpoint": checkpoint, "layers": L, "heads": H, "tokens": len(ids),
            "vocab": logits.shape[1], "ids": ids, "labels": labels, "weights": stored_dtype}
    if text is not None:
        case["text"] = text
    CASES.append(case)
    print(f"  {name}: T = {len(ids)}, largest attention weight {max(float(a.max()) for a in attentions):.3f}")


def main():
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    vocab, merges = build_tokenizer()
    v = len(vocab)
    ranks = {m: i for i, m in enumerate(merges)}
    decoder = {i: t for t, i in vocab.items()}
    byte_decoder = {c: b for b, c in BYTE_ENCODER.items()}

    def label(i):
        token = decoder[i]
        if token == "<|endoftext|>":
            return token
        raw = bytes(byte_decoder[c] for c in token)
        return raw.decode("utf-8") if raw.isascii() and raw.decode().isprintable() else None

    torch.manual_seed(20240611)
    model = Gpt2(v, E, H, L, N_POSITIONS)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn_like(p))
            elif name.startswith("w"):
                p.copy_(0.5 * torch.randn_like(p))
            else:
                p.copy_(0.4 * torch.randn_like(p))

    state = {k: p.detach().clone().contiguous() for k, p in model.state_dict().items()}
    # F32: GPT2LMHeadModel layout, "transformer." prefix, lm_head.weight (== wte) stored.
    f32 = {"transformer." + k: t for k, t in state.items()}
    f32["lm_head.weight"] = state["wte.weight"].clone()
    write_folder("gpt2_tiny", config(v), f32, vocab, merges)
    # F16: GPT2Model names, with the old mask buffers.
    f16 = {k: t.half() for k, t in state.items()}
    for l in range(L):
        f16[f"h.{l}.attn.bias"] = torch.ones(N_POSITIONS, N_POSITIONS).tril().view(1, 1, N_POSITIONS, N_POSITIONS)
        f16[f"h.{l}.attn.masked_bias"] = torch.tensor(-1e4)
    cfg16 = config(v)
    cfg16["architectures"] = ["GPT2Model"]
    write_folder("gpt2_tiny_f16", cfg16, f16, vocab, merges)
    # BF16: GPT2LMHeadModel names without lm_head (tied), as bfloat16 checkpoints are saved.
    bf16 = {"transformer." + k: t.bfloat16() for k, t in state.items()}
    cfg_bf16 = dict(config(v), torch_dtype="bfloat16")
    write_folder("gpt2_tiny_bf16", cfg_bf16, bf16, vocab, merges)

    text_ids = encode(TEXT, vocab, ranks)
    assert len(text_ids) < len(TEXT.encode()), "the merges should apply to the text"
    record("gpt2_tiny.tokens", "gpt2_tiny", model, TOKENS, None, [label(i) for i in TOKENS], "F32")
    record("gpt2_tiny.text", "gpt2_tiny", model, text_ids, TEXT, [label(i) for i in text_ids], "F32")
    model16 = Gpt2(v, E, H, L, N_POSITIONS)
    model16.load_state_dict({k: t.half().float() for k, t in state.items()})
    record("gpt2_tiny_f16.text", "gpt2_tiny_f16", model16, text_ids, TEXT, [label(i) for i in text_ids], "F16")
    model_bf16 = Gpt2(v, E, H, L, N_POSITIONS)
    model_bf16.load_state_dict({k: t.bfloat16().float() for k, t in state.items()})
    record("gpt2_tiny_bf16.text", "gpt2_tiny_bf16", model_bf16, text_ids, TEXT, [label(i) for i in text_ids], "BF16")

    write_bad(v, state, vocab, merges)
    write_json(os.path.join(GOLDEN_DIR, "cases.json"), {"tolerance": 1e-4, "cases": CASES})
    print(f"wrote {len(CASES)} golden cases; vocabulary {v} tokens, {len(merges)} merges")


def write_bad(v, state, vocab, merges):
    bad = os.path.join(CHECKPOINT_DIR, "bad")
    os.makedirs(bad, exist_ok=True)
    base = {"transformer." + k: t for k, t in state.items()}
    missing = dict(base)
    del missing["transformer.h.1.mlp.c_fc.bias"]
    write_folder("bad/gpt2_missing_tensor", config(v), missing)
    wrong = dict(base)
    wrong["transformer.h.0.attn.c_attn.weight"] = base["transformer.h.0.attn.c_attn.weight"].T.contiguous()
    write_folder("bad/gpt2_wrong_shape", config(v), wrong)
    write_folder("bad/gpt2_vocab_mismatch", config(v + 23), base)
    head = dict(base)
    head["lm_head.weight"] = base["transformer.wte.weight"][: v - 1].clone()
    write_folder("bad/gpt2_lm_head_shape", config(v), head)


if __name__ == "__main__":
    main()
