#!/usr/bin/python3
"""Writes the golden files the attention tests compare against: tests/golden/.

Run with Debian's PyTorch (python3-torch):  /usr/bin/python3 tools/make_golden.py

Each case is a folder holding the inputs of `headscope-cli mha` and what PyTorch
computes from them:
  weights.safetensors   the layer's weights, in one of the two layouts of docs/cli.md
  input.safetensors     x [B, Tq, E]
  kv.safetensors        x [B, Tk, Ek]            (cross-attention cases)
  keep.safetensors      keep [B, Tq, Tk] or [Tq, Tk], nonzero = allowed   (mask cases)
  expected.safetensors  weights [B, H, Tq, Tk], context [B, Tq, D], output [B, Tq, E],
                        and the stages q, k, v [B, H, T, Dh], scores [B, H, Tq, Tk]
and cases.json lists every case with the flags to pass (heads, causal, disable_heads).

The five tutorial classes (the PyTorch notebooks Headscope grew from) are re-created
below as they are written, with their bugs fixed and marked `FIX:`, dropout off; each
records its intermediate tensors in `self.trace` so the stages can be compared too. The
reference is PyTorch's own arithmetic: nothing here calls Headscope.
"""

import json
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden")

# --------------------------------------------------------------------------------------
# safetensors writer (the format is 8-byte LE header length, JSON header, raw LE data)

DTYPE_NAMES = {
    torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
    torch.int64: "I64", torch.int32: "I32", torch.uint8: "U8", torch.bool: "BOOL",
}


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def save_safetensors(path, tensors, metadata=None):
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        data = tensor_bytes(t)
        header[name] = {"dtype": DTYPE_NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def split_heads(t, num_heads):
    """[B, T, D] -> [B, H, T, Dh]"""
    b, n, d = t.shape
    return t.view(b, n, num_heads, d // num_heads).transpose(1, 2)


def zero_disabled(context, disabled):
    """context [B, H, T, Dh]: heads listed in `disabled` contribute zero (ablation)."""
    if disabled:
        context = context.clone()
        context[:, list(disabled)] = 0
    return context


def zero_fully_masked_rows(weights, keep):
    """FIX shared by the -1e9 tutorials: a row with no allowed key came out uniform
    (softmax of equal -1e9 scores); it must be all 0."""
    if keep is None:
        return weights
    any_allowed = (keep != 0).any(dim=-1, keepdim=True)
    return weights * any_allowed


# --------------------------------------------------------------------------------------
# 000: ViT-style multi-head self-attention

class Seed000MultiHeadAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.dim = dim
        self.head_dim = dim // num_heads
        assert self.head_dim * num_heads == dim, "dim must be divisible by num_heads"
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.disabled_heads = ()   # extension: head ablation

    def forward(self, x):
        batch_size = x.size(0)
        Q = self.query(x)
        K = self.key(x)
        V = self.value(x)
        Q = Q.view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)
        K = K.view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)
        V = V.view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.softmax(scores, dim=-1)
        context = zero_disabled(torch.matmul(attn, V), self.disabled_heads)
        context = context.transpose(1, 2).contiguous().view(batch_size, -1, self.dim)
        out = self.out(context)
        self.trace = dict(q=Q, k=K, v=V, scores=scores, weights=attn, context=context, output=out)
        return out

    def export(self):
        return {"q_proj.weight": self.query.weight, "q_proj.bias": self.query.bias,
                "k_proj.weight": self.key.weight, "k_proj.bias": self.key.bias,
                "v_proj.weight": self.value.weight, "v_proj.bias": self.value.bias,
                "out_proj.weight": self.out.weight, "out_proj.bias": self.out.bias}


# --------------------------------------------------------------------------------------
# 001: the same with an optional mask (-1e9) and the per-head weights returned

class Seed001MultiHeadAttention(nn.Module):
    def __init__(self, d_model=512, num_heads=8):
        super().__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split_heads(self, x, batch_size):
        x = x.view(batch_size, -1, self.num_heads, self.d_k)
        return x.transpose(1, 2)

    def forward(self, x, mask=None):
        batch_size, seq_len, _ = x.shape
        Q = self.split_heads(self.W_q(x), batch_size)
        K = self.split_heads(self.W_k(x), batch_size)
        V = self.split_heads(self.W_v(x), batch_size)
        scores = torch.matmul(Q, K.transpose(-2, -1)) / (self.d_k ** 0.5)
        masked = scores
        if mask is not None:
            masked = scores.masked_fill(mask == 0, -1e9)
        attention_weights = F.softmax(masked, dim=-1)
        attention_weights = zero_fully_masked_rows(attention_weights, mask)   # FIX
        context = torch.matmul(attention_weights, V)
        context = context.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)
        output = self.W_o(context)
        self.trace = dict(q=Q, k=K, v=V, scores=scores, weights=attention_weights, context=context, output=output)
        return output, attention_weights

    def export(self):
        return {"q_proj.weight": self.W_q.weight, "q_proj.bias": self.W_q.bias,
                "k_proj.weight": self.W_k.weight, "k_proj.bias": self.W_k.bias,
                "v_proj.weight": self.W_v.weight, "v_proj.bias": self.W_v.bias,
                "out_proj.weight": self.W_o.weight, "out_proj.bias": self.W_o.bias}


# --------------------------------------------------------------------------------------
# 002: separate bias-free single heads with a causal mask, concatenated and projected

class Seed002Head(nn.Module):
    def __init__(self, C, head_size, T):
        super().__init__()
        self.key = nn.Linear(C, head_size, bias=False)
        self.query = nn.Linear(C, head_size, bias=False)
        self.value = nn.Linear(C, head_size, bias=False)
        # FIX: the tutorial read C and T from globals; they are arguments here.
        self.register_buffer('tril', torch.tril(torch.ones(T, T)))

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        scores = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = scores.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
        wei = F.softmax(wei, dim=-1)
        v = self.value(x)
        out = wei @ v
        self.trace = dict(q=q, k=k, v=v, scores=scores, weights=wei)
        return out


class Seed002MultiHead(nn.Module):
    def __init__(self, C, head_size, num_heads, T):
        super().__init__()
        self.heads = nn.ModuleList([Seed002Head(C, head_size, T) for _ in range(num_heads)])
        self.proj = nn.Linear(C, C)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        result = self.proj(out)
        stack = lambda key: torch.stack([h.trace[key] for h in self.heads], dim=1)
        self.trace = dict(q=stack("q"), k=stack("k"), v=stack("v"), scores=stack("scores"),
                          weights=stack("weights"), context=out, output=result)
        return result

    def export(self):
        cat = lambda attr: torch.cat([getattr(h, attr).weight for h in self.heads], dim=0)
        return {"q_proj.weight": cat("query"), "k_proj.weight": cat("key"), "v_proj.weight": cat("value"),
                "out_proj.weight": self.proj.weight, "out_proj.bias": self.proj.bias}


# --------------------------------------------------------------------------------------
# 003: single-head vs multi-head, (query, key, value) signature, D = heads x head_dim != E

class Seed003SingleHeadAttention(nn.Module):
    def __init__(self, input_dim, output_dim, dropout_rate=0.1):
        super().__init__()
        self.query_proj = nn.Linear(input_dim, output_dim)
        self.key_proj = nn.Linear(input_dim, output_dim)
        self.value_proj = nn.Linear(input_dim, output_dim)
        self.scale = math.sqrt(output_dim)
        self.dropout = nn.Dropout(dropout_rate)

    def forward(self, query, key, value, mask=None):
        Q = self.query_proj(query)
        K = self.key_proj(key)
        V = self.value_proj(value)
        scores = torch.matmul(Q, K.transpose(-2, -1)) / self.scale
        masked = scores if mask is None else scores.masked_fill(mask == 0, -1e9)
        attention_weights = torch.softmax(masked, dim=-1)
        attention_weights = zero_fully_masked_rows(attention_weights, mask)   # FIX
        attention_weights = self.dropout(attention_weights)
        output = torch.matmul(attention_weights, V)
        self.trace = dict(q=Q.unsqueeze(1), k=K.unsqueeze(1), v=V.unsqueeze(1), scores=scores.unsqueeze(1),
                          weights=attention_weights.unsqueeze(1), context=output)
        return output, attention_weights


class Seed003MultiHeadAttention(nn.Module):
    def __init__(self, input_dim, head_dim, num_heads, dropout_rate=0.1):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.input_dim = input_dim
        self.query_proj = nn.Linear(input_dim, num_heads * head_dim)
        self.key_proj = nn.Linear(input_dim, num_heads * head_dim)
        self.value_proj = nn.Linear(input_dim, num_heads * head_dim)
        self.output_proj = nn.Linear(num_heads * head_dim, input_dim)
        self.dropout = nn.Dropout(dropout_rate)
        self.scale = math.sqrt(head_dim)

    def forward(self, query, key, value, mask=None):
        batch_size, seq_len, _ = query.shape
        kv_len = key.shape[1]   # FIX: keys/values were viewed with the query's length
        Q = self.query_proj(query).view(batch_size, seq_len, self.num_heads, self.head_dim).transpose(1, 2)
        K = self.key_proj(key).view(batch_size, kv_len, self.num_heads, self.head_dim).transpose(1, 2)
        V = self.value_proj(value).view(batch_size, kv_len, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(Q, K.transpose(-2, -1)) / self.scale
        masked = scores if mask is None else scores.masked_fill(mask == 0, -1e9)
        attention_weights = torch.softmax(masked, dim=-1)
        attention_weights = zero_fully_masked_rows(attention_weights, mask)   # FIX
        attention_weights = self.dropout(attention_weights)
        x = torch.matmul(attention_weights, V)
        x = x.transpose(1, 2).contiguous().view(batch_size, seq_len, self.num_heads * self.head_dim)
        output = self.output_proj(x)
        self.trace = dict(q=Q, k=K, v=V, scores=scores, weights=attention_weights, context=x, output=output)
        return output, attention_weights

    def export(self):
        return {"q_proj.weight": self.query_proj.weight, "q_proj.bias": self.query_proj.bias,
                "k_proj.weight": self.key_proj.weight, "k_proj.bias": self.key_proj.bias,
                "v_proj.weight": self.value_proj.weight, "v_proj.bias": self.value_proj.bias,
                "out_proj.weight": self.output_proj.weight, "out_proj.bias": self.output_proj.bias}


# --------------------------------------------------------------------------------------
# 004: the final class: bias-free q/k/v, optional causal mask (-inf), self- or cross-attention

class Seed004MultiHeadAttention(nn.Module):
    def __init__(self, num_heads, embed_dim, bias=False):
        super().__init__()
        assert embed_dim % num_heads == 0, "embed_dim % num_heads != 0"
        self.num_heads = num_heads
        self.embed_dim = embed_dim
        self.head_dim = self.embed_dim // self.num_heads
        self.wq = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.wk = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.wv = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.output_projection = nn.Linear(self.embed_dim, self.embed_dim)

    def forward(self, q_input, k_input=None, v_input=None, mask=False):
        batch = q_input.size(0)
        if k_input is None:
            k_input = q_input
        if v_input is None:
            v_input = q_input
        q = self.wq(q_input)
        k = self.wk(k_input)
        v = self.wv(v_input)
        T_q, T_k = q_input.size(1), k_input.size(1)
        q = q.reshape(batch, T_q, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.reshape(batch, T_k, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.reshape(batch, T_k, self.num_heads, self.head_dim).transpose(1, 2)
        score = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        mask = torch.triu(torch.ones(T_q, T_k), diagonal=1).bool() if mask else torch.zeros(T_q, T_k).bool()
        mask = mask.unsqueeze(0).unsqueeze(0)
        masked = score.masked_fill(mask, float("-inf"))
        attention_score = torch.softmax(masked, dim=-1)
        attention = attention_score @ v
        attention = attention.transpose(1, 2)
        attention = attention.reshape(batch, T_q, self.embed_dim)
        mha_output = self.output_projection(attention)
        self.trace = dict(q=q, k=k, v=v, scores=score, weights=attention_score, context=attention,
                          output=mha_output)
        return mha_output

    def export(self):
        return {"q_proj.weight": self.wq.weight, "k_proj.weight": self.wk.weight, "v_proj.weight": self.wv.weight,
                "out_proj.weight": self.output_projection.weight, "out_proj.bias": self.output_projection.bias}


# --------------------------------------------------------------------------------------
# torch.nn.MultiheadAttention, with its stages recomputed from its own weights

def torch_mha_case(mha, query, kv, attn_mask, key_padding_mask, disabled=()):
    """Runs nn.MultiheadAttention (batch_first) and returns its trace."""
    # With gradients on, PyTorch 1.13 takes its reference (non-"fast path") route,
    # which also handles bias=False; dropout is 0, so nothing else changes.
    with torch.enable_grad():
        out, weights = mha(query, kv, kv, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=True, average_attn_weights=False)
    out, weights = out.detach(), weights.detach()
    E, H = mha.embed_dim, mha.num_heads
    if mha._qkv_same_embed_dim:
        wq, wk, wv = mha.in_proj_weight.chunk(3)
    else:
        wq, wk, wv = mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight
    bq = bk = bv = None
    if mha.in_proj_bias is not None:
        bq, bk, bv = mha.in_proj_bias.chunk(3)
    q = split_heads(F.linear(query, wq, bq), H)
    k = split_heads(F.linear(kv, wk, bk), H)
    v = split_heads(F.linear(kv, wv, bv), H)
    scores = q @ k.transpose(-2, -1) / math.sqrt(E // H)
    context = zero_disabled(weights @ v, disabled)
    context = context.transpose(1, 2).reshape(query.shape[0], query.shape[1], E)
    if disabled:   # nn.MultiheadAttention has no ablation: project the ablated context
        out = F.linear(context, mha.out_proj.weight, mha.out_proj.bias)
    return dict(q=q, k=k, v=v, scores=scores, weights=weights, context=context, output=out)


def torch_mha_export(mha):
    return {name: t for name, t in mha.state_dict().items()}


def randomize_biases(module):
    """nn.MultiheadAttention starts its biases at 0; give them values so they are tested."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.normal_(0.0, 0.2)


# --------------------------------------------------------------------------------------

CASES = []


def add_case(name, description, heads, weights, x, trace, kv=None, keep=None, causal=False, disabled=()):
    folder = os.path.join(OUT_DIR, name)
    os.makedirs(folder, exist_ok=True)
    for stale in os.listdir(folder):
        os.remove(os.path.join(folder, stale))
    save_safetensors(os.path.join(folder, "weights.safetensors"), {k: v.detach() for k, v in weights.items()})
    save_safetensors(os.path.join(folder, "input.safetensors"), {"x": x})
    if kv is not None:
        save_safetensors(os.path.join(folder, "kv.safetensors"), {"x": kv})
    if keep is not None:
        save_safetensors(os.path.join(folder, "keep.safetensors"), {"keep": keep})
    expected = {key: trace[key].detach().float().contiguous()
                for key in ("q", "k", "v", "scores", "weights", "context", "output")}
    for key, t in expected.items():
        assert torch.isfinite(t).all(), (name, key)
    save_safetensors(os.path.join(folder, "expected.safetensors"), expected)
    CASES.append({"name": name, "description": description, "heads": heads, "causal": causal,
                  "disable_heads": list(disabled), "kv": kv is not None, "keep": keep is not None})


def main():
    torch.manual_seed(1337)
    torch.set_grad_enabled(False)

    # 000 — ViT-style self-attention, 4 heads of 8.
    m = Seed000MultiHeadAttention(dim=32, num_heads=4).eval()
    x = torch.randn(2, 9, 32)
    m(x)
    add_case("seed000_vit_mhsa", "seed 000: ViT-style MHSA, separate q/k/v/out with bias", 4, m.export(), x, m.trace)

    # 000 again with heads 1 and 3 ablated.
    m.disabled_heads = (1, 3)
    m(x)
    add_case("seed000_ablate_1_3", "seed 000 with heads 1 and 3 disabled", 4, m.export(), x, m.trace,
             disabled=(1, 3))

    # 001 — per-batch keep mask (-1e9), with one query row fully masked.
    m = Seed001MultiHeadAttention(d_model=24, num_heads=3).eval()
    x = torch.randn(2, 7, 24)
    keep = (torch.rand(2, 7, 7) < 0.6)
    keep[:, :, 0] = True              # every row but one keeps a key...
    keep[1, 3, :] = False             # ...and this one keeps none: weights 0, never NaN
    m(x, mask=keep.unsqueeze(1))
    add_case("seed001_keep_batched", "seed 001: per-batch keep mask (BOOL) with a fully masked row", 3,
             m.export(), x, m.trace, keep=keep)

    # 002 — 4 bias-free heads of 8, causal, batch 4.
    m = Seed002MultiHead(C=32, head_size=8, num_heads=4, T=8).eval()
    x = torch.randn(4, 8, 32)
    m(x)
    add_case("seed002_causal_heads", "seed 002: concatenated bias-free heads with a causal mask", 4,
             m.export(), x, m.trace, causal=True)

    # 003 — single head with a shared [Tq, Tk] keep mask (F32 0/1).
    m = Seed003SingleHeadAttention(8, 8).eval()
    x = torch.randn(1, 5, 8)
    keep = (torch.rand(5, 5) < 0.7).float()
    keep[:, 2] = 1.0
    _, w = m(x, x, x, mask=keep)
    trace = dict(m.trace)
    proj = {"q_proj.weight": m.query_proj.weight, "q_proj.bias": m.query_proj.bias,
            "k_proj.weight": m.key_proj.weight, "k_proj.bias": m.key_proj.bias,
            "v_proj.weight": m.value_proj.weight, "v_proj.bias": m.value_proj.bias}
    # The tutorial's single head has no output projection: give it the identity, so
    # output = context, and the layer is still one of docs/cli.md's layouts.
    proj["out_proj.weight"] = torch.eye(8)
    trace["output"] = trace["context"]
    add_case("seed003_single_head_keep", "seed 003: single-head attention, shared keep mask (F32)", 1,
             proj, x, trace, keep=keep)

    # 003 — 4 heads of 3: D = 12 != E = 8, self-attention.
    m = Seed003MultiHeadAttention(input_dim=8, head_dim=3, num_heads=4).eval()
    x = torch.randn(1, 5, 8)
    m(x, x, x)
    add_case("seed003_inner_width", "seed 003: heads x head_dim = 12 != model width 8", 4, m.export(), x, m.trace)

    # 003 — the same class as cross-attention (queries 5, keys/values 7).
    m = Seed003MultiHeadAttention(input_dim=8, head_dim=3, num_heads=4).eval()
    x = torch.randn(2, 5, 8)
    kv = torch.randn(2, 7, 8)
    m(x, kv, kv)
    add_case("seed003_cross", "seed 003: cross-attention Tq=5, Tk=7, D=12", 4, m.export(), x, m.trace, kv=kv)

    # 004 — self-attention with the causal mask, no q/k/v bias.
    m = Seed004MultiHeadAttention(num_heads=4, embed_dim=16).eval()
    x = torch.randn(3, 10, 16)
    m(x, mask=True)
    add_case("seed004_self_causal", "seed 004: masked self-attention (-inf), bias-free q/k/v", 4, m.export(), x,
             m.trace, causal=True)

    # 004 — cross-attention with the causal mask over Tq=6, Tk=9.
    m = Seed004MultiHeadAttention(num_heads=4, embed_dim=16).eval()
    x = torch.randn(2, 6, 16)
    kv = torch.randn(2, 9, 16)
    m(x, kv, kv, mask=True)
    add_case("seed004_cross_causal", "seed 004: cross-attention with a causal mask, Tq=6, Tk=9", 4, m.export(), x,
             m.trace, kv=kv, causal=True)

    # nn.MultiheadAttention, packed in_proj, boolean attn_mask + key_padding_mask, batch 3.
    mha = nn.MultiheadAttention(24, 4, batch_first=True).eval()
    randomize_biases(mha)
    x = torch.randn(3, 6, 24)
    attn_mask = torch.rand(6, 6) < 0.3          # True = NOT allowed (PyTorch's convention)
    attn_mask.fill_diagonal_(False)
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[1, 4:] = True
    padding[2, 5:] = True
    for i in range(6):                            # keep at least one key per row
        if all(attn_mask[i, j] or padding[1, j] for j in range(6)):
            attn_mask[i, 0] = False
    trace = torch_mha_case(mha, x, x, attn_mask, padding)
    keep = (~attn_mask).unsqueeze(0) & (~padding).unsqueeze(1)   # [B, Tq, Tk]
    add_case("torch_mha_packed_masks", "nn.MultiheadAttention packed, attn_mask AND key_padding_mask, batch 3", 4,
             torch_mha_export(mha), x, trace, keep=keep.to(torch.uint8))

    # Same layer, two heads ablated and the causal mask.
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    trace = torch_mha_case(mha, x, x, causal, None, disabled=(0, 2))
    add_case("torch_mha_packed_causal_ablate", "nn.MultiheadAttention packed, causal, heads 0 and 2 disabled", 4,
             torch_mha_export(mha), x, trace, causal=True, disabled=(0, 2))

    # kdim = vdim = 10 != E = 16: separate q/k/v_proj_weight; cross-attention with padding.
    mha = nn.MultiheadAttention(16, 4, kdim=10, vdim=10, batch_first=True).eval()
    randomize_biases(mha)
    x = torch.randn(3, 5, 16)
    kv = torch.randn(3, 7, 10)
    padding = torch.zeros(3, 7, dtype=torch.bool)
    padding[0, 6:] = True
    padding[2, 3:] = True
    trace = torch_mha_case(mha, x, kv, None, padding)
    keep = (~padding).unsqueeze(1).expand(3, 5, 7).to(torch.int64)
    add_case("torch_mha_kdim_cross", "nn.MultiheadAttention kdim=vdim=10, cross-attention, key padding (I64 mask), "
             "kv in F64", 4, torch_mha_export(mha), x, trace, kv=kv.double(), keep=keep)

    # No bias anywhere; weights stored as F16 and input as BF16 (values rounded first,
    # so PyTorch computes on exactly what the files hold).
    mha = nn.MultiheadAttention(16, 2, bias=False, batch_first=True).eval()
    for p in mha.parameters():
        p.data = p.data.half().float()
    x = torch.randn(2, 5, 16).bfloat16().float()
    trace = torch_mha_case(mha, x, x, None, None)
    weights = {k: v.half() for k, v in torch_mha_export(mha).items()}
    add_case("torch_mha_nobias_f16", "nn.MultiheadAttention without bias, F16 weights, BF16 input", 2, weights,
             x.bfloat16(), trace)

    # Causal AND a key-padding keep mask together (both flags on one command line).
    mha = nn.MultiheadAttention(12, 3, batch_first=True).eval()
    randomize_biases(mha)
    x = torch.randn(3, 6, 12)
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[0, 4:] = True
    padding[2, 2:] = True
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    trace = torch_mha_case(mha, x, x, causal, padding)
    keep = (~padding).unsqueeze(1).expand(3, 6, 6).to(torch.int32)
    add_case("torch_mha_causal_and_padding", "nn.MultiheadAttention, causal attn_mask AND key_padding_mask "
             "(--causal with an I32 --keep)", 3, torch_mha_export(mha), x, trace, keep=keep, causal=True)

    with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
        json.dump({"generator": "tools/make_golden.py", "torch": torch.__version__, "cases": CASES}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(CASES)} cases to {os.path.normpath(OUT_DIR)}")


if __name__ == "__main__":
    sys.exit(main())
