#!/usr/bin/python3
"""Writes tiny encoder-decoder checkpoints (T5, Flan-T5, BART) in Hugging Face's folder
layout, what PyTorch computes from them, and broken checkpoints that must be refused.

Run with Debian's PyTorch (python3-torch):

    /usr/bin/python3 tools/make_seq2seq_checkpoints.py

tests/checkpoints/ (config.json with every field of the named hub checkpoint's config.json,
sizes shrunk; weights under the hub's tensor names; no tokenizer files: the cases give ids)
  t5_tiny/        t5-small: F32, E=32 H=4 Dh=8 L=2+2, ReLU MLP, head tied (hidden x E^-0.5), the
                  embedding's tied copies and the unused first cross-attention bias table stored
                  as early releases did
  flan_t5_tiny/   google/flan-t5-small: BF16, E=32 H=3 Dh=8 (inner 24 != E), 2 encoder and 3
                  decoder layers, gated-GELU (tanh), untied lm_head, 16 buckets up to distance 24
                  (a 40-token source reaches the log-spaced buckets and the clamp)
  bart_tiny/      facebook/bart-large-cnn (BartForConditionalGeneration): F32, E=32 H=4 L=2+2,
                  post-norm, learned positions at offset 2, layernorm_embedding, final_logits_bias;
                  its tokenizer.json in bart's layout (byte-level BPE, RobertaProcessing: <s> text
                  </s>) over 300 ids, the text cases' ids from GPT-2's encoder.py algorithm
                  (make_gpt2_checkpoints.encode), which BART's tokenizer runs
  bad/t5_* bad/bart_*   small F32 checkpoints, each must be refused with one line
tests/golden/seq2seq/
  <case>.safetensors   encoder.attn.L [H, Ts, Ts], decoder.attn.L [H, Tt, Tt], cross.attn.L
                       [H, Tt, Ts] (each head's map as computed, a disabled head's too), input_ids,
                       decoder_input_ids, logits [Tt, V]
  cases.json           the manifest the C++ test walks (with each case's greedy generation)

The reference is the modules below, written from transformers' modeling_t5.py (T5Attention
with compute_bias and _relative_position_bucket, T5LayerNorm, T5DenseActDense /
T5DenseGatedActDense, T5Stack, T5ForConditionalGeneration's scaled tied head) and
modeling_bart.py (BartLearnedPositionalEmbedding, BartAttention with its scaled query,
BartEncoderLayer / BartDecoderLayer, final_logits_bias), in float32 with 16-bit weights
upcast as from_pretrained(torch_dtype=float32) does, eager attention; disabled heads as
transformers' head masks (the head's weights times 0 before they meet the values).
Nothing here calls Headscope.
"""

import json
import math
import os
import shutil
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)
from make_gpt2_checkpoints import BYTE_ENCODER, encode, learn_merges  # noqa: E402
from make_vit_checkpoints import cast, from_stored, write_folder, write_json  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CHECKPOINT_DIR = os.path.join(ROOT, "tests", "checkpoints")
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "seq2seq")
DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16}

# --------------------------------------------------------------------------------------
# the reference: T5


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACT = {"relu": torch.relu, "gelu": nn.functional.gelu, "gelu_new": gelu_new}


class T5LayerNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class T5Attention(nn.Module):
    def __init__(self, c, has_relative_attention_bias, is_decoder):
        super().__init__()
        self.is_decoder = is_decoder
        self.has_relative_attention_bias = has_relative_attention_bias
        self.buckets = c["relative_attention_num_buckets"]
        self.max_distance = c.get("relative_attention_max_distance", 128)
        self.d_model, self.kv, self.heads = c["d_model"], c["d_kv"], c["num_heads"]
        inner = self.heads * self.kv
        self.q = nn.Linear(self.d_model, inner, bias=False)
        self.k = nn.Linear(self.d_model, inner, bias=False)
        self.v = nn.Linear(self.d_model, inner, bias=False)
        self.o = nn.Linear(inner, self.d_model, bias=False)
        if has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(self.buckets, self.heads)

    @staticmethod
    def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        relative_buckets = 0
        if bidirectional:
            num_buckets //= 2
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).to(torch.long)
        relative_position_if_large = torch.min(
            relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def compute_bias(self, query_length, key_length):
        context_position = torch.arange(query_length, dtype=torch.long)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long)[None, :]
        relative_position = memory_position - context_position
        bucket = self._relative_position_bucket(relative_position, bidirectional=not self.is_decoder,
                                                num_buckets=self.buckets, max_distance=self.max_distance)
        values = self.relative_attention_bias(bucket)        # [q, k, H]
        return values.permute([2, 0, 1]).unsqueeze(0)        # [1, H, q, k]

    def forward(self, hidden, key_value=None, mask=None, position_bias=None, head_mask=None):
        T = hidden.shape[0]
        source = hidden if key_value is None else key_value
        S = source.shape[0]

        def shape(x, n):
            return x.view(1, n, self.heads, self.kv).transpose(1, 2)

        q, k, v = shape(self.q(hidden), T), shape(self.k(source), S), shape(self.v(source), S)
        scores = torch.matmul(q, k.transpose(3, 2))
        if position_bias is None:
            if not self.has_relative_attention_bias:
                position_bias = torch.zeros((1, self.heads, T, S), dtype=scores.dtype)
            else:
                position_bias = self.compute_bias(T, S)
            if mask is not None:
                position_bias = position_bias + mask
        scores += position_bias
        weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        shown = weights
        if head_mask is not None:
            weights = weights * head_mask.view(1, -1, 1, 1)
        out = torch.matmul(weights, v).transpose(1, 2).contiguous().view(T, self.heads * self.kv)
        return self.o(out), position_bias, shown[0]


class T5FF(nn.Module):
    """T5LayerFF: layer_norm, then DenseReluDense (T5DenseActDense or T5DenseGatedActDense)."""

    def __init__(self, c):
        super().__init__()
        self.layer_norm = T5LayerNorm(c["d_model"], c["layer_norm_epsilon"])
        proj = c.get("feed_forward_proj", "relu")
        self.gated = proj.startswith("gated-")
        act = proj.split("-")[-1]
        self.act = ACT["gelu_new" if proj == "gated-gelu" else act]
        d, f = c["d_model"], c["d_ff"]
        self.DenseReluDense = nn.Module()
        if self.gated:
            self.DenseReluDense.wi_0 = nn.Linear(d, f, bias=False)
            self.DenseReluDense.wi_1 = nn.Linear(d, f, bias=False)
        else:
            self.DenseReluDense.wi = nn.Linear(d, f, bias=False)
        self.DenseReluDense.wo = nn.Linear(f, d, bias=False)

    def forward(self, h):
        x = self.layer_norm(h)
        m = self.DenseReluDense
        if self.gated:
            x = self.act(m.wi_0(x)) * m.wi_1(x)
        else:
            x = self.act(m.wi(x))
        return h + m.wo(x)


class T5AttentionLayer(nn.Module):
    def __init__(self, c, has_bias, is_decoder, name):
        super().__init__()
        setattr(self, name, T5Attention(c, has_bias, is_decoder))
        self.name = name
        self.layer_norm = T5LayerNorm(c["d_model"], c["layer_norm_epsilon"])


class T5Block(nn.Module):
    def __init__(self, c, has_bias, is_decoder):
        super().__init__()
        self.is_decoder = is_decoder
        layers = [T5AttentionLayer(c, has_bias, is_decoder, "SelfAttention")]
        if is_decoder:
            layers.append(T5AttentionLayer(c, False, is_decoder, "EncDecAttention"))
        layers.append(T5FF(c))
        self.layer = nn.ModuleList(layers)

    def forward(self, h, mask, position_bias, memory, cross_bias, head_mask, cross_head_mask):
        self_layer = self.layer[0]
        out, position_bias, self_map = self_layer.SelfAttention(self_layer.layer_norm(h), mask=mask,
                                                                position_bias=position_bias, head_mask=head_mask)
        h = h + out
        cross_map = None
        if self.is_decoder:
            cross = self.layer[1]
            out, cross_bias, cross_map = cross.EncDecAttention(cross.layer_norm(h), key_value=memory,
                                                               position_bias=cross_bias, head_mask=cross_head_mask)
            h = h + out
        return self.layer[-1](h), position_bias, cross_bias, self_map, cross_map


class T5Stack(nn.Module):
    def __init__(self, c, n_layers, is_decoder):
        super().__init__()
        self.is_decoder = is_decoder
        self.block = nn.ModuleList([T5Block(c, i == 0, is_decoder) for i in range(n_layers)])
        self.final_layer_norm = T5LayerNorm(c["d_model"], c["layer_norm_epsilon"])

    def forward(self, x, memory=None, head_masks=None, cross_head_masks=None):
        T = x.shape[0]
        mask = None
        if self.is_decoder:
            mask = (1.0 - torch.tril(torch.ones(T, T))) * torch.finfo(torch.float32).min
        position_bias = cross_bias = None
        self_maps, cross_maps = [], []
        for i, block in enumerate(self.block):
            x, position_bias, cross_bias, self_map, cross_map = block(
                x, mask, position_bias, memory, cross_bias,
                head_masks[i] if head_masks is not None else None,
                cross_head_masks[i] if cross_head_masks is not None else None)
            self_maps.append(self_map)
            cross_maps.append(cross_map)
        return self.final_layer_norm(x), self_maps, cross_maps


class T5ForConditionalGeneration(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])
        self.encoder = T5Stack(c, c["num_layers"], False)
        self.decoder = T5Stack(c, c.get("num_decoder_layers") or c["num_layers"], True)
        self.tied = c.get("tie_word_embeddings", True)
        if not self.tied:
            self.lm_head = nn.Linear(c["d_model"], c["vocab_size"], bias=False)

    def forward(self, input_ids, decoder_input_ids, masks):
        memory, encoder_maps, _ = self.encoder(self.shared(input_ids), head_masks=masks.get("encoder"))
        h, decoder_maps, cross_maps = self.decoder(self.shared(decoder_input_ids), memory,
                                                   head_masks=masks.get("decoder"),
                                                   cross_head_masks=masks.get("cross"))
        if self.tied:
            h = h * (self.c["d_model"] ** -0.5)
            return h @ self.shared.weight.T, encoder_maps, decoder_maps, cross_maps
        return self.lm_head(h), encoder_maps, decoder_maps, cross_maps


# --------------------------------------------------------------------------------------
# the reference: BART


class BartAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj, self.k_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.v_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, hidden, key_value=None, mask=None, head_mask=None):
        T = hidden.shape[0]
        source = hidden if key_value is None else key_value
        S = source.shape[0]

        def shape(x, n):
            return x.view(1, n, self.heads, self.head_dim).transpose(1, 2)

        q = shape(self.q_proj(hidden) * self.scaling, T)
        k, v = shape(self.k_proj(source), S), shape(self.v_proj(source), S)
        scores = torch.matmul(q, k.transpose(2, 3))
        if mask is not None:
            scores = scores + mask
        weights = nn.functional.softmax(scores, dim=-1)
        shown = weights
        if head_mask is not None:
            weights = weights * head_mask.view(1, -1, 1, 1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(T, self.heads * self.head_dim)
        return self.out_proj(out), shown[0]


class BartLayer(nn.Module):
    def __init__(self, c, is_decoder):
        super().__init__()
        d, heads, ffn = c["d_model"], c["encoder_attention_heads"], c["encoder_ffn_dim"]
        self.is_decoder = is_decoder
        self.act = ACT[c["activation_function"]]
        self.self_attn = BartAttention(d, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d)
        if is_decoder:
            self.encoder_attn = BartAttention(d, heads)
            self.encoder_attn_layer_norm = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, h, mask, memory, head_mask, cross_head_mask):
        out, self_map = self.self_attn(h, mask=mask, head_mask=head_mask)
        h = self.self_attn_layer_norm(h + out)
        cross_map = None
        if self.is_decoder:
            out, cross_map = self.encoder_attn(h, key_value=memory, head_mask=cross_head_mask)
            h = self.encoder_attn_layer_norm(h + out)
        h = self.final_layer_norm(h + self.fc2(self.act(self.fc1(h))))
        return h, self_map, cross_map


class BartStack(nn.Module):
    def __init__(self, c, n_layers, is_decoder):
        super().__init__()
        self.is_decoder = is_decoder
        self.embed_scale = math.sqrt(c["d_model"]) if c.get("scale_embedding") else 1.0
        # BartLearnedPositionalEmbedding: offset 2, so max_position_embeddings + 2 rows.
        self.embed_positions = nn.Embedding(c["max_position_embeddings"] + 2, c["d_model"])
        self.layernorm_embedding = nn.LayerNorm(c["d_model"])
        self.layers = nn.ModuleList([BartLayer(c, is_decoder) for _ in range(n_layers)])

    def forward(self, embeds, memory=None, head_masks=None, cross_head_masks=None):
        T = embeds.shape[0]
        x = embeds * self.embed_scale + self.embed_positions(torch.arange(T) + 2)
        x = self.layernorm_embedding(x)
        mask = None
        if self.is_decoder:
            mask = (1.0 - torch.tril(torch.ones(T, T))) * torch.finfo(torch.float32).min
        self_maps, cross_maps = [], []
        for i, layer in enumerate(self.layers):
            x, self_map, cross_map = layer(x, mask, memory, head_masks[i] if head_masks is not None else None,
                                           cross_head_masks[i] if cross_head_masks is not None else None)
            self_maps.append(self_map)
            cross_maps.append(cross_map)
        return x, self_maps, cross_maps


class BartForConditionalGeneration(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = nn.Module()
        self.model.shared = nn.Embedding(c["vocab_size"], c["d_model"])
        self.model.encoder = BartStack(c, c["encoder_layers"], False)
        self.model.decoder = BartStack(c, c["decoder_layers"], True)
        self.register_buffer("final_logits_bias", torch.zeros((1, c["vocab_size"])))

    def forward(self, input_ids, decoder_input_ids, masks):
        shared = self.model.shared
        memory, encoder_maps, _ = self.model.encoder(shared(input_ids), head_masks=masks.get("encoder"))
        h, decoder_maps, cross_maps = self.model.decoder(shared(decoder_input_ids), memory,
                                                         head_masks=masks.get("decoder"),
                                                         cross_head_masks=masks.get("cross"))
        return h @ shared.weight.T + self.final_logits_bias, encoder_maps, decoder_maps, cross_maps


# --------------------------------------------------------------------------------------
# checkpoints

T5_TASKS = {
    "summarization": {"early_stopping": True, "length_penalty": 2.0, "max_length": 200, "min_length": 30,
                      "no_repeat_ngram_size": 3, "num_beams": 4, "prefix": "summarize: "},
    "translation_en_to_de": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to German: "},
    "translation_en_to_fr": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to French: "},
    "translation_en_to_ro": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to Romanian: "},
}

V = 96
V_BART = 300   # every byte, the specials and 39 merges: a byte-level BPE needs all 256 bytes
BART_CORPUS = ("the cat sat on the mat. the dog sat on the log. a summary of the news: the cat ate the hat. "
               "then the dog ate the rat, and the cat sat there.")


def bart_tokenizer():
    """tokenizer.json as facebook/bart-*'s: <s> <pad> </s> <unk>, every byte, merges, <mask> last."""
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    vocab = {t: i for i, t in enumerate(specials)}
    for ch in BYTE_ENCODER.values():
        vocab[ch] = len(vocab)
    merges = learn_merges(BART_CORPUS, V_BART - len(vocab) - 1)
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<mask>"] = len(vocab)
    assert len(vocab) == V_BART

    def added(i, content, lstrip=False):
        return {"id": i, "content": content, "single_word": False, "lstrip": lstrip, "rstrip": False,
                "normalized": False, "special": True}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [added(i, t) for i, t in enumerate(specials)] + [added(V_BART - 1, "<mask>", True)],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                               "trim_offsets": True, "add_prefix_space": False},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]}}, vocab, merges


def bart_ids(text, vocab, merges):
    """BartTokenizer's ids: <s>, GPT-2's byte-level BPE of the text, </s>."""
    ranks = {pair: i for i, pair in enumerate(merges)}
    return [0] + encode(text, vocab, ranks) + [2]


def t5_small_config():
    """t5-small's config.json, sizes shrunk."""
    return {"architectures": ["T5ForConditionalGeneration"], "d_ff": 64, "d_kv": 8, "d_model": 32,
            "decoder_start_token_id": 0, "dropout_rate": 0.1, "eos_token_id": 1, "initializer_factor": 1.0,
            "is_encoder_decoder": True, "layer_norm_epsilon": 1e-06, "model_type": "t5", "n_positions": 512,
            "num_heads": 4, "num_layers": 2, "output_past": True, "pad_token_id": 0,
            "relative_attention_num_buckets": 32, "task_specific_params": T5_TASKS, "vocab_size": V}


def flan_t5_small_config():
    """google/flan-t5-small's config.json, sizes shrunk."""
    return {"architectures": ["T5ForConditionalGeneration"], "d_ff": 48, "d_kv": 8, "d_model": 32,
            "decoder_start_token_id": 0, "dense_act_fn": "gelu_new", "dropout_rate": 0.1, "eos_token_id": 1,
            "feed_forward_proj": "gated-gelu", "initializer_factor": 1.0, "is_encoder_decoder": True,
            "is_gated_act": True, "layer_norm_epsilon": 1e-06, "model_type": "t5", "n_positions": 512,
            "num_decoder_layers": 3, "num_heads": 3, "num_layers": 2, "output_past": True, "pad_token_id": 0,
            "relative_attention_max_distance": 24, "relative_attention_num_buckets": 16,
            "task_specific_params": T5_TASKS, "tie_word_embeddings": False, "torch_dtype": "float32",
            "transformers_version": "4.23.1", "use_cache": True, "vocab_size": V}


def bart_large_cnn_config():
    """facebook/bart-large-cnn's config.json, sizes shrunk."""
    return {"_num_labels": 3, "activation_dropout": 0.0, "activation_function": "gelu", "add_final_layer_norm": False,
            "architectures": ["BartForConditionalGeneration"], "attention_dropout": 0.0, "bos_token_id": 0,
            "classif_dropout": 0.0, "classifier_dropout": 0.0, "d_model": 32, "decoder_attention_heads": 4,
            "decoder_ffn_dim": 64, "decoder_layerdrop": 0.0, "decoder_layers": 2, "decoder_start_token_id": 2,
            "dropout": 0.1, "early_stopping": True, "encoder_attention_heads": 4, "encoder_ffn_dim": 64,
            "encoder_layerdrop": 0.0, "encoder_layers": 2, "eos_token_id": 2, "force_bos_token_to_be_generated": True,
            "forced_bos_token_id": 0, "forced_eos_token_id": 2, "gradient_checkpointing": False,
            "id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}, "init_std": 0.02,
            "is_encoder_decoder": True, "label2id": {"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2},
            "length_penalty": 2.0, "max_length": 142, "max_position_embeddings": 64, "min_length": 56,
            "model_type": "bart", "no_repeat_ngram_size": 3, "normalize_before": False, "num_beams": 4,
            "num_hidden_layers": 2, "output_past": True, "pad_token_id": 1, "prefix": " ", "scale_embedding": False,
            "task_specific_params": {"summarization": {"early_stopping": True, "length_penalty": 2.0,
                                                       "max_length": 142, "min_length": 56,
                                                       "no_repeat_ngram_size": 3, "num_beams": 4}},
            "transformers_version": "4.7.0.dev0", "use_cache": True, "vocab_size": V_BART}


def randomise(module, seed, spread):
    """Every parameter from N(0, spread) with a seeded generator: norm weights near 1, the
    rest wide enough that the maps are far from uniform (and not so wide that float32's
    rounding decides them: record() checks)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            if "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("relative_attention_bias.weight"):
                p.copy_(1.5 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(spread * torch.randn(p.shape, generator=g))
        for name, b in sorted(module.named_buffers()):
            b.copy_(0.05 * torch.randn(b.shape, generator=g))


def stored_weights(model, early_release):
    """The tensors as the hub's files hold them."""
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if early_release:
        # Early T5 releases stored the embedding's tied copies and an unused cross-attention
        # bias table (transformers ignores it on load).
        state["encoder.embed_tokens.weight"] = state["shared.weight"].clone()
        state["decoder.embed_tokens.weight"] = state["shared.weight"].clone()
        g = torch.Generator().manual_seed(99)
        state["decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"] = torch.randn(
            (model.c["relative_attention_num_buckets"], model.c["num_heads"]), generator=g)
    return state


def load_into(model, stored):
    """from_pretrained(torch_dtype=float32): every stored tensor upcast and loaded."""
    state = from_stored(stored)
    for extra in ["encoder.embed_tokens.weight", "decoder.embed_tokens.weight",
                  "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"]:
        state.pop(extra, None)
    model.load_state_dict(state, strict=True)


# --------------------------------------------------------------------------------------
# cases

CASES = []


def head_masks(c, n_layers, heads, disabled):
    """{layer: [heads]} as transformers' head masks ([L][H] of 1 and 0), or None."""
    if not disabled:
        return None
    mask = torch.ones(n_layers, heads)
    for layer, hs in disabled.items():
        for h in hs:
            mask[int(layer), h] = 0.0
    return mask


def run(model, source, target, disabled):
    c = model.c
    heads = c.get("num_heads") or c["encoder_attention_heads"]
    enc_layers = c.get("num_layers") or c["encoder_layers"]
    dec_layers = c.get("num_decoder_layers") or c.get("decoder_layers") or c["num_layers"]
    masks = {"encoder": head_masks(c, enc_layers, heads, disabled.get("encoder")),
             "decoder": head_masks(c, dec_layers, heads, disabled.get("decoder")),
             "cross": head_masks(c, dec_layers, heads, disabled.get("cross"))}
    with torch.no_grad():
        return model(torch.tensor(source), torch.tensor(target), masks)


def greedy(model, source, start, end, steps):
    """Greedy decoding as a loop of full forwards: each next token the argmax (the first of
    equals) of the last row; stops after the end token. The margin between the best and the
    runner-up is checked, so that a float's last bits cannot flip the choice."""
    ids = [start]
    smallest = float("inf")
    for _ in range(steps):
        logits = run(model, source, ids, {})[0][-1]
        top = torch.topk(logits, 2)
        smallest = min(smallest, float(top.values[0] - top.values[1]))
        ids.append(int(torch.argmax(logits)))
        if ids[-1] == end:
            break
    assert smallest > 1e-3, f"greedy margin {smallest} too small to compare"
    return ids


def check_conditioning(model, source, target, disabled, result):
    """The case in float64: float32's own rounding must move no map or logit by more than a
    quarter of the tolerance, so a 1e-4 comparison tests the implementation, not the case."""
    import copy
    wide = copy.deepcopy(model).double()
    wide.c = model.c
    logits64, *maps64 = run(wide, source, target, disabled)
    worst = float((result[0].double() - logits64).abs().max()) / max(1.0, float(logits64.abs().max()))
    for ours, wides in zip(result[1:], maps64):
        for a, b in zip(ours, wides):
            if a is not None:
                worst = max(worst, float((a.double() - b).abs().max()))
    assert worst < 2.5e-5, f"float32 moves the case by {worst}: the weights are too wide"


def record(name, checkpoint, model, source, target, disabled=None, generate=0, text=None):
    disabled = disabled or {}
    result = run(model, source, target, disabled)
    check_conditioning(model, source, target, disabled, result)
    logits, encoder_maps, decoder_maps, cross_maps = result
    tensors = {"input_ids": torch.tensor(source, dtype=torch.int64),
               "decoder_input_ids": torch.tensor(target, dtype=torch.int64),
               "logits": logits.contiguous()}
    for kind, maps in (("encoder", encoder_maps), ("decoder", decoder_maps), ("cross", cross_maps)):
        for l, m in enumerate(maps):
            assert torch.isfinite(m).all() and torch.allclose(m.sum(-1), torch.ones(()), atol=1e-5)
            tensors[f"{kind}.attn.{l}"] = m.contiguous()
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    save_safetensors(os.path.join(GOLDEN_DIR, name + ".safetensors"), tensors)
    c = model.c
    case = {"name": name, "checkpoint": checkpoint, "source": source, "target": target, "disabled": disabled,
            "heads": c.get("num_heads") or c["encoder_attention_heads"],
            "encoder_layers": c.get("num_layers") or c["encoder_layers"],
            "decoder_layers": c.get("num_decoder_layers") or c.get("decoder_layers") or c["num_layers"],
            "vocab": c["vocab_size"]}
    if text:
        case["text"], case["target_text"] = text
    if generate:
        case["generate"] = generate
        case["generated"] = greedy(model, source, c["decoder_start_token_id"], c["eos_token_id"], generate)
    CASES.append(case)


def make(name, config, kind, dtype, seed, spread):
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config) if kind == "t5" else BartForConditionalGeneration(config)
    model.c = config
    randomise(model, seed, spread)
    stored = cast(stored_weights(model, name == "t5_tiny"), DTYPES[dtype])
    write_folder(name, config, None, stored)
    load_into(model, stored)   # the reference reads what the file holds
    return model, stored


def main():
    shutil.rmtree(GOLDEN_DIR, ignore_errors=True)
    long_source = [(7 * i + 3) % (V - 4) + 4 for i in range(40)]
    t5, _ = make("t5_tiny", t5_small_config(), "t5", "F32", 7, 0.35)
    record("t5_tiny", "t5_tiny", t5, [13, 27, 5, 44, 61, 9, 88, 1], [0, 31, 7, 52, 19], generate=8)
    record("t5_tiny_long", "t5_tiny", t5, long_source, [0] + long_source[:23])
    record("t5_tiny_cross_off", "t5_tiny", t5, [13, 27, 5, 44, 61, 9, 88, 1], [0, 31, 7, 52, 19],
           disabled={"cross": {"1": [0, 2]}, "encoder": {"0": [1]}, "decoder": {"1": [3]}})
    flan, _ = make("flan_t5_tiny", flan_t5_small_config(), "t5", "BF16", 2, 0.25)
    record("flan_t5_tiny", "flan_t5_tiny", flan, [21, 8, 70, 33, 2, 1], [0, 40, 11, 65], generate=8)
    record("flan_t5_tiny_long", "flan_t5_tiny", flan, long_source, [0] + long_source[:30])
    bart, _ = make("bart_tiny", bart_large_cnn_config(), "bart", "F32", 5, 0.35)
    tokenizer, vocab, merges = bart_tokenizer()
    write_json(os.path.join(CHECKPOINT_DIR, "bart_tiny", "tokenizer.json"), tokenizer)
    text, target_text = "the cat sat on the mat.", "a cat ate the hat"
    labels = bart_ids(target_text, vocab, merges)
    # decoder_input_ids = shift_tokens_right(labels): the start token, then every label but the last
    record("bart_tiny_text", "bart_tiny", bart, bart_ids(text, vocab, merges), [2] + labels[:-1],
           text=(text, target_text))
    record("bart_tiny", "bart_tiny", bart, [0, 31, 47, 8, 66, 12, 2], [2, 0, 31, 47, 9], generate=8)
    record("bart_tiny_cross_off", "bart_tiny", bart, [0, 31, 47, 8, 66, 12, 2], [2, 0, 31, 47, 9],
           disabled={"cross": {"0": [1], "1": [0, 3]}})
    write_json(os.path.join(GOLDEN_DIR, "cases.json"), {"tolerance": 1e-4, "cases": CASES})
    write_bad(t5)


def write_bad(t5):
    """Broken checkpoints, each refused with one line (docs/errors.md)."""
    bad = os.path.join(CHECKPOINT_DIR, "bad")
    stored = stored_weights(t5, True)

    def folder(name, config, tensors):
        path = os.path.join(bad, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        write_json(os.path.join(path, "config.json"), config)
        save_safetensors(os.path.join(path, "model.safetensors"), tensors, {"format": "pt"})

    missing_bias = dict(stored)
    del missing_bias["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
    folder("t5_missing_relative_bias", t5_small_config(), missing_bias)
    folder("t5_bad_feed_forward", dict(t5_small_config(), feed_forward_proj="gated-gelu-new"), stored)
    untied = dict(t5_small_config(), tie_word_embeddings=False)
    folder("t5_untied_no_lm_head", untied, stored)
    other_copy = dict(stored)
    other_copy["decoder.embed_tokens.weight"] = stored["shared.weight"] * 2
    folder("t5_embed_copy_differs", t5_small_config(), other_copy)
    folder("bart_heads_differ", dict(bart_large_cnn_config(), decoder_attention_heads=2), stored)


if __name__ == "__main__":
    main()
