#!/usr/bin/python3
"""Writes tiny SigLIP checkpoints in Hugging Face's folder layout, and what PyTorch computes
from them.

Run with Debian's PyTorch, Pillow and NumPy (python3-torch python3-pil python3-numpy):

    /usr/bin/python3 tools/make_siglip_checkpoints.py

tests/checkpoints/               folders as transformers' save_pretrained writes them:
                                 config.json, preprocessor_config.json, model.safetensors
                                 (or shards + model.safetensors.index.json)
  siglip_tiny/                   (its spiece.model and tokenizer files: make_siglip_tokenizer.py,
                                 run at the end)
                                 google/siglip-base-patch16-224's config.json: the short form
                                 transformers 4.37.0.dev0 wrote when the model was converted (most
                                 fields left to SiglipConfig's defaults). Its towers' fields are
                                 copied from the hub file as lablup/mlxcel's SigLIP text tests
                                 quote it (text_config: hidden_size, intermediate_size,
                                 model_type, num_attention_heads, vocab_size; vision_config:
                                 model_type, patch_size); the top-level fields (architectures,
                                 initializer_factor, model_type, torch_dtype, transformers_version)
                                 are those of google/siglip-so400m-patch14-384's hub file below,
                                 written by the same conversion. Sizes shrunk, and with them the
                                 fields needed to say so: vision 16 wide, 2 heads, 2 layers, 32 px
                                 in 8 px patches (4 x 4); text 16 wide (equal to the vision width,
                                 as in the real model, so there is no projection_size and the text
                                 head stays square), 2 heads, 2 layers, the real 32000-token
                                 vocabulary (real SigLIP token ids are accepted), the default 64
                                 positions (max_position_embeddings absent, as in the real file).
                                 hidden_act and layer_norm_eps are absent too: the defaults,
                                 gelu_pytorch_tanh and 1e-6, in both towers. SiglipModel, F16
                                 (torch_dtype "float16"), one file, no position_ids buffers
                                 (modeling_siglip.py registers them persistent=False, so
                                 save_pretrained never wrote them for SigLIP); logit_scale and
                                 logit_bias are [1] tensors holding the SigLIP paper's
                                 initialisation, log(10) (2.302734 in F16) and -10 (see
                                 LOGITS_TINY). The
                                 SiglipImageProcessor preprocessor_config.json of the so400m hub
                                 folder below (convert_siglip_to_hf.py writes the same
                                 SiglipImageProcessor(size=...) for every SigLIP; the base's own
                                 file was not found): resize to {"height", "width"} bicubic,
                                 rescale 1/255, mean and std 0.5, no centre crop,
                                 "processor_class": "SiglipProcessor"; size 32.
  siglip_tiny_so400m_bf16/       google/siglip-so400m-patch14-384's config.json, every field of
                                 the hub file (copied from wangminrui2022/ComfyUI-Dream-Frame,
                                 models/clip/siglip-so400m-patch14-384/config.json, commit
                                 a658c809, a verbatim copy of the hub folder with its tokenizer
                                 files), shrunk: vision 24 wide, 3 heads, 3 layers, intermediate
                                 90 (4304/1152 of the width, not 4x, as in the real model), 28 px
                                 in 7 px patches (4 x 4); text 12 wide, 3 heads, 2 layers,
                                 intermediate 45, and three fields the real file leaves at their
                                 defaults, written because shrunk: vocab_size 512,
                                 max_position_embeddings 16 and projection_size 24 (the text head
                                 maps 12 -> 24 so text and image embeddings meet; transformers'
                                 convert_siglip_to_hf.py writes projection_size whenever the towers'
                                 widths differ). BF16 (torch_dtype "bfloat16") in two shards with
                                 an index; logit_scale the trained 4.7215 of so400m-patch14-384
                                 (4.71875 in BF16; see LOGITS_SO400M), logit_bias -10. Its real
                                 preprocessor_config.json (same file and commit), size 28.
  bad/siglip_no_head/           the so400m tiny's config.json with vision_config.vision_use_head
                                 false, and bad/siglip_projection_size/ with text_config.projection_size
                                 12 (not the vision width, 24): config files alone, refused before
                                 any weight is read (docs/errors.md rows 131 and 132).
tests/golden/siglip/
  <checkpoint>.<image>[.own].safetensors
        vision.attn.L [H, N, N] for every vision layer (N patches, no [CLS]),
        vision.pool.attn [H, 1, N]: the attention pooling head's probe over the patches, per
                      head (nn.MultiheadAttention, need_weights=True, average_attn_weights=False),
        text.I.attn.L [H_t, T_I, T_I] for label I and every text layer (no mask of any kind:
                      rows see every position),
        image_embeds [P] and text_embeds [labels, P]: the pooler outputs before L2
                      normalisation (get_image_features / get_text_features; SiglipOutput's are
                      normalised),
        logits_per_image [labels] (logit_scale.exp() * cosine similarity + logit_bias),
        probs [labels] (sigmoid of those, each label on its own: SigLIP's probabilities)
  cases.json    the manifest the C++ tests walk, with tests/golden/clip/cases.json's keys:
                {"tolerance", "cases": [{"name", "checkpoint", "image", "own_resolution",
                "label_ids", "label_texts" (where the ids came from text), "vision_layers",
                "vision_heads", "vision_tokens" (N, no [CLS]), "grid": [w, h], "text_layers",
                "text_heads", "projection_dim" (P), "weights", "note"}]}, plus "logit_bias" (the
                stored value) and "probability": "sigmoid".

The reference is `SiglipReference` below, written from transformers' modeling_siglip.py
(SiglipVisionEmbeddings with interpolate_pos_encoding, SiglipTextEmbeddings, SiglipAttention,
SiglipMLP, SiglipEncoderLayer, SiglipVisionTransformer's post_layernorm and
SiglipMultiheadAttentionPoolingHead, SiglipTextTransformer's pooling and head, SiglipModel's
logits; read at huggingface/transformers 00b20656 and a 2025 main in zucchini-nlp/transformers
0928031c), on the weights as the file stores them upcast to float32 as from_pretrained does.
Its encoder layer is make_clip_checkpoints.py's (CLIPEncoderLayer: the same tensor names and
arithmetic) run without a mask and with gelu_pytorch_tanh; every layer's attention and
output are checked against torch.nn.MultiheadAttention loaded with the same weights, and the
pooling head IS a torch.nn.MultiheadAttention, as in transformers. Pictures follow
SiglipImageProcessor's slow path in Pillow step by step, which is ViTImageProcessor's
(make_vit_checkpoints.preprocess): convert to RGB (the zero-shot pipeline's load_image does;
the processor alone has no do_convert_rgb in these configs), resize straight to (height,
width) with PIL bicubic, rescale by 1/255 in float64, normalise with mean and std 0.5. At
their own resolution (headscope's --own-resolution; transformers' interpolate_pos_encoding=
True) the pictures are cut at the right and bottom to whole patches, as
make_clip_checkpoints.py does (make_vision_checkpoints.preprocess), and the position grid
resized by bicubic interpolation to the new grid with size=(h, w), align_corners=False, no
antialiasing (current transformers; older releases, e.g. modeling_siglip.py at
huggingface/transformers 00b20656, passed scale_factor=((h + 0.1) / side, (w + 0.1) / side)
instead, which gives other numbers).

Labels: each label's ids run on their own, exactly as given (no padding added). SigLIP's
text tower has no attention mask and pools the LAST position, so padding is part of the
input: a label padded to 64 with </s> (as the pipeline's padding="max_length" does) is simply
a different id list, and one such label is included. siglip_tiny's ids are SiglipTokenizer's for
google/siglip-base-patch16-224 as transformers' tests/models/siglip/test_tokenization_siglip.py
states them (test_tokenizer_integration, test_eos_in_input); checked against the real
tokenizer.json's vocabulary (the so400m copy above: same 32000-piece English vocabulary):
"▁the ▁real ▁mountain ▁view </s>", "▁summary ▁of ▁the ▁text </s>", "▁ a ▁long ▁paragraph ▁for
▁sum mar ization </s>", "▁ s an ▁franc isco </s>" + 58 more </s>. The so400m tiny's ids are
made up below 512 (the shrunk vocabulary), each ending in 1 (</s>).

Nothing here calls Headscope.
"""

import copy
import math
import os
import shutil
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_clip_checkpoints import (IMAGES, ClipEncoderLayer, cast_floats, check_maps,  # noqa: E402
                                   load_reference, randomise)
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)
from make_vision_checkpoints import preprocess as preprocess_cut  # noqa: E402  (own resolution, as CLIP's)
from make_vit_checkpoints import ROOT, write_folder, write_json  # noqa: E402
from make_vit_checkpoints import preprocess as preprocess_resized  # noqa: E402  (= SiglipImageProcessor's steps)

GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "siglip")

# logit_scale, logit_bias. No trained value of google/siglip-base-patch16-224 was found with a
# source, so the tiny base holds the SigLIP paper's initialisation (Zhai et al. 2023: t' =
# log 10, b = -10), which also keeps its logits in [-20, 0] and its probabilities graded.
LOGITS_TINY = (math.log(10.0), -10.0)
# The so400m tiny holds google/siglip-so400m-patch14-384's trained logit_scale as printed in
# mlfoundations/open_clip issue #746 (4.7215, exp ~112; checked there against big_vision's
# SigLIP_demo.ipynb); its trained logit_bias was not found with a source: the paper's -10.
LOGITS_SO400M = (4.7215, -10.0)

EOS = 1   # </s>: SiglipTokenizer appends it and pads with it; no bos
# transformers' tests/models/siglip/test_tokenization_siglip.py (google/siglip-base-patch16-224).
TINY_LABELS = [
    ("the real mountain view", [260, 638, 3293, 870, EOS]),
    ("Summary of the text.", [6254, 267, 260, 1443, EOS]),
    ("A long paragraph for summarization.", [262, 266, 476, 8532, 270, 4460, 3949, 1682, EOS]),
    ("San Francisco", [262, 264, 452, 20563, 15949] + [EOS] * 59),   # padding="max_length": 64
]
# The shrunk 512-token vocabulary: lengths 3, 5 and 8, the largest id in the last.
SO400M_LABEL_IDS = [
    [17, 300, EOS],
    [42, 301, 7, 88, EOS],
    [5, 99, 250, 13, 480, 64, 511, EOS],
]

SIGLIP_MEAN = [0.5, 0.5, 0.5]
SIGLIP_STD = [0.5, 0.5, 0.5]


# --------------------------------------------------------------------------------------
# the reference SigLIP, its modules named as transformers' SiglipModel names its tensors

ACTIVATIONS = {
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "gelu": lambda x: F.gelu(x),
}


class SiglipEncoderLayer(ClipEncoderLayer):
    """SiglipEncoderLayer: CLIPEncoderLayer's pre-LN block with the same tensor names and
    arithmetic (x += out_proj(attn(layer_norm1(x))); x += fc2(act(fc1(layer_norm2(x))))),
    SigLIP's activations, and never a mask."""

    def __init__(self, c):
        super().__init__({**c, "hidden_act": "gelu"})   # CLIP's table has no tanh GELU: set below
        self.act = ACTIVATIONS[c["hidden_act"]]

    def forward(self, x):
        return super().forward(x, causal=False)


def check_against_torch_mha(layer, x):
    """The layer's attention weights and output against torch.nn.MultiheadAttention given
    the same q/k/v/out weights (packed as in_proj_weight = [q; k; v])."""
    a = layer.self_attn
    e = x.shape[-1]
    mha = nn.MultiheadAttention(e, layer.heads, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]))
        mha.in_proj_bias.copy_(torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]))
        mha.out_proj.weight.copy_(a.out_proj.weight)
        mha.out_proj.bias.copy_(a.out_proj.bias)
        y = layer.layer_norm1(x)
        out, w = mha(y, y, y, need_weights=True, average_attn_weights=False)
        x1 = x + out
        x2 = x1 + layer.mlp.fc2(layer.act(layer.mlp.fc1(layer.layer_norm2(x1))))
        ref_x, ref_w = layer(x)
    assert float((w - ref_w).abs().max()) < 1e-6, float((w - ref_w).abs().max())
    diff = float((x2 - ref_x).abs().max())
    assert diff < 1e-4 * max(1.0, float(ref_x.abs().max())), diff


# The reference checks itself as it runs (each layer against nn.MultiheadAttention, the probe
# by hand); a benchmark (tools/bench_vs_torch.py) times the forward alone and turns it off.
CHECKS = True


def encoder(layers, x):
    """Runs the layers, each checked against nn.MultiheadAttention on its own input."""
    attentions = []
    for layer in layers:
        if CHECKS:
            check_against_torch_mha(layer, x)
        x, w = layer(x)
        attentions.append(w)
    return x, attentions


class SiglipReference(nn.Module):
    """SigLIP (Zhai et al. 2023) at inference, as modeling_siglip.py computes it.

    Vision: patches by a stride-P convolution WITH bias, learned positions added (no class
    embedding; resized bicubically to the grid at the picture's own size), pre-LN encoder
    layers, post_layernorm on every row, then the multihead attention pooling head: a learned
    probe [1, 1, E] attends over the rows with torch.nn.MultiheadAttention, x = a +
    mlp(layernorm(a)) with a the attention's output, row 0 is the image embedding (no
    projection). Text: token + position embeddings (positions 0..T-1), the same layers with
    no mask at all (not causal), final_layer_norm, the LAST row through head (Linear with
    bias, hidden -> projection_size). logits_per_image = logit_scale.exp() * cos(image, text)
    + logit_bias; probabilities by sigmoid."""

    def __init__(self, config):
        super().__init__()
        tc, vc = config["text_config"], config["vision_config"]
        self.tc, self.vc = tc, vc
        assert vc.get("vision_use_head", True)

        e, patch, eps = vc["hidden_size"], vc["patch_size"], vc["layer_norm_eps"]
        side = vc["image_size"] // patch
        self.vision_model = nn.Module()
        self.vision_model.embeddings = nn.Module()
        self.vision_model.embeddings.patch_embedding = nn.Conv2d(vc["num_channels"], e, patch, stride=patch)
        self.vision_model.embeddings.position_embedding = nn.Embedding(side * side, e)
        self.vision_model.encoder = nn.Module()
        self.vision_model.encoder.layers = nn.ModuleList(SiglipEncoderLayer(vc)
                                                         for _ in range(vc["num_hidden_layers"]))
        self.vision_model.post_layernorm = nn.LayerNorm(e, eps=eps)
        head = self.vision_model.head = nn.Module()
        head.probe = nn.Parameter(torch.zeros(1, 1, e))
        head.attention = nn.MultiheadAttention(e, vc["num_attention_heads"], batch_first=True)
        head.layernorm = nn.LayerNorm(e, eps=eps)
        head.mlp = nn.Module()
        head.mlp.fc1, head.mlp.fc2 = nn.Linear(e, vc["intermediate_size"]), nn.Linear(vc["intermediate_size"], e)
        self.head_act = ACTIVATIONS[vc["hidden_act"]]

        t = tc["hidden_size"]
        self.text_model = nn.Module()
        self.text_model.embeddings = nn.Module()
        self.text_model.embeddings.token_embedding = nn.Embedding(tc["vocab_size"], t)
        self.text_model.embeddings.position_embedding = nn.Embedding(tc["max_position_embeddings"], t)
        self.text_model.encoder = nn.Module()
        self.text_model.encoder.layers = nn.ModuleList(SiglipEncoderLayer(tc) for _ in range(tc["num_hidden_layers"]))
        self.text_model.final_layer_norm = nn.LayerNorm(t, eps=tc["layer_norm_eps"])
        self.text_model.head = nn.Linear(t, tc["projection_size"])
        assert tc["projection_size"] == e, "text and image embeddings must meet"

        self.logit_scale = nn.Parameter(torch.zeros(1))
        self.logit_bias = nn.Parameter(torch.zeros(1))

    def hf_names(self):
        """{transformers name: parameter}: the module tree is named as SiglipModel's."""
        return dict(self.named_parameters())

    def buffers_stored(self):
        """SigLIP checkpoints store no position_ids buffers (persistent=False from the start)."""
        return {}

    def vision_positions(self, height, width):
        """SiglipVisionEmbeddings: the stored table for the configured square grid, otherwise
        interpolate_pos_encoding's bicubic resize to the picture's grid (no [CLS] to keep)."""
        table = self.vision_model.embeddings.position_embedding.weight.unsqueeze(0)   # [1, N, E]
        p = self.vc["patch_size"]
        new_h, new_w = height // p, width // p
        side = int(round(math.sqrt(table.shape[1])))
        assert side * side == table.shape[1]
        if new_h == side and new_w == side:
            return table
        dim = table.shape[-1]
        grid = table.reshape(1, side, side, dim).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, size=(new_h, new_w), mode="bicubic", align_corners=False)
        return grid.permute(0, 2, 3, 1).reshape(1, new_h * new_w, dim)

    def pool(self, x):
        """SiglipMultiheadAttentionPoolingHead on the post-layernormed rows x [1, N, E]:
        (image embedding [1, E], the probe's attention per head [1, H, 1, N])."""
        head = self.vision_model.head
        probe = head.probe.repeat(x.shape[0], 1, 1)
        a, weights = head.attention(probe, x, x, need_weights=True, average_attn_weights=False)
        if CHECKS:
            self.check_pool(head, probe, x, a, weights)
        x = a + head.mlp.fc2(self.head_act(head.mlp.fc1(head.layernorm(a))))
        return x[:, 0], weights

    @staticmethod
    def check_pool(head, probe, x, a, weights):
        # transformers calls it with the default (averaged) weights: the output is the same.
        assert torch.equal(a, head.attention(probe, x, x)[0])
        # the per-head weights by hand: softmax((probe Wq + bq)(x Wk + bk)^T / sqrt(Dh))
        e, h = x.shape[-1], head.attention.num_heads
        wq, wk, _ = head.attention.in_proj_weight.split(e)
        bq, bk, _ = head.attention.in_proj_bias.split(e)
        q = (probe @ wq.t() + bq).view(1, 1, h, e // h).transpose(1, 2)
        k = (x @ wk.t() + bk).view(1, -1, h, e // h).transpose(1, 2)
        by_hand = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(e // h), dim=-1)
        assert float((by_hand - weights).abs().max()) < 1e-6

    def encode_image(self, pixels):
        """pixels [1, 3, H, W] -> (attention maps [1, H, N, N] per layer, pooling map
        [1, H, 1, N], image_embeds [1, E])."""
        vm = self.vision_model
        x = vm.embeddings.patch_embedding(pixels).flatten(2).transpose(1, 2)   # [1, N, E]
        x = x + self.vision_positions(pixels.shape[2], pixels.shape[3])
        x, attentions = encoder(vm.encoder.layers, x)
        pooled, pool_weights = self.pool(vm.post_layernorm(x))
        return attentions, pool_weights, pooled

    def encode_text(self, ids):
        """ids (one label, as given) -> (attention maps [1, H, T, T] per layer, text_embeds [1, P])."""
        tm = self.text_model
        t = len(ids)
        assert t <= self.tc["max_position_embeddings"] and max(ids) < self.tc["vocab_size"]
        x = tm.embeddings.token_embedding(torch.tensor([ids])) + tm.embeddings.position_embedding(torch.arange(t))
        x, attentions = encoder(tm.encoder.layers, x)
        x = tm.final_layer_norm(x)
        return attentions, tm.head(x[:, -1])

    def forward(self, pixels, labels):
        vision, pool_weights, image_embeds = self.encode_image(pixels)
        texts = [self.encode_text(ids) for ids in labels]
        text_embeds = torch.cat([e for _, e in texts], dim=0)                   # [labels, P]
        unit = lambda z: z / z.norm(p=2, dim=-1, keepdim=True)
        logits_per_text = unit(text_embeds) @ unit(image_embeds).t() * self.logit_scale.exp() + self.logit_bias
        return vision, pool_weights, [a for a, _ in texts], image_embeds[0], text_embeds, logits_per_text.t()[0]


def randomise_siglip(module, seed, logit_scale, logit_bias):
    """make_clip_checkpoints.randomise (norms near 1, embeddings 0.5, projections 1.5 / sqrt(fan
    in), the probe and the pooling attention's packed projections included), then the logit
    scale and bias."""
    randomise(module, seed)
    with torch.no_grad():
        module.logit_scale.fill_(logit_scale)
        module.logit_bias.fill_(logit_bias)


# --------------------------------------------------------------------------------------
# configs


def siglip_config(text, vision, dtype):
    """The hub's SiglipModel config.json as transformers 4.37.0.dev0 wrote google/siglip-*:
    the top-level fields of the real files, each tower's fields from `text` / `vision`."""
    return {
        "architectures": ["SiglipModel"],
        "initializer_factor": 1.0,
        "model_type": "siglip",
        "text_config": dict(sorted(dict(model_type="siglip_text_model", **text).items())),
        "torch_dtype": dtype,
        "transformers_version": "4.37.0.dev0",
        "vision_config": dict(sorted(dict(model_type="siglip_vision_model", **vision).items())),
    }


def with_defaults(config):
    """The config as SiglipConfig holds it once loaded: each tower's missing fields from
    SiglipTextConfig / SiglipVisionConfig's defaults; projection_size defaults to the text
    tower's hidden_size."""
    common = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_attention_heads": 12,
              "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-06}
    out = dict(config)
    out["text_config"] = {**common, "vocab_size": 32000, "max_position_embeddings": 64, **config["text_config"]}
    out["text_config"].setdefault("projection_size", out["text_config"]["hidden_size"])
    out["vision_config"] = {**common, "num_channels": 3, "image_size": 224, "patch_size": 16,
                            **config["vision_config"]}
    return out


def siglip_image_processor(size):
    """google/siglip-*'s preprocessor_config.json (SiglipImageProcessor, written by
    convert_siglip_to_hf.py's SiglipImageProcessor(size=...)), shrunk."""
    return {
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": SIGLIP_MEAN,
        "image_processor_type": "SiglipImageProcessor",
        "image_std": SIGLIP_STD,
        "processor_class": "SiglipProcessor",
        "resample": 3,
        "rescale_factor": 0.00392156862745098,
        "size": {"height": size, "width": size},
    }


# --------------------------------------------------------------------------------------
# goldens

CASES = []


def preprocess(image, processor, patch=None):
    """pixel_values [1, 3, H, W]: SiglipImageProcessor's slow path, or with `patch` the picture
    at its own size cut to whole patches."""
    assert processor["do_resize"] and processor["do_rescale"] and processor["do_normalize"]
    assert "crop_size" not in processor and not processor.get("do_center_crop", False)
    if patch is None:
        return preprocess_resized(image, processor)
    return preprocess_cut(image, processor, patch)


def record(checkpoint, processor, model, labels, texts, stored_dtype, note, image, own_resolution=False):
    p = model.vc["patch_size"]
    pixels = preprocess(image, processor, p if own_resolution else None)
    with torch.no_grad():
        vision, pool_weights, text_maps, image_embeds, text_embeds, logits = model(pixels, labels)
    check_maps(vision, causal=False)
    check_maps([pool_weights], causal=False)
    for maps in text_maps:
        check_maps(maps, causal=False)
    tensors = {f"vision.attn.{l}": a[0].contiguous() for l, a in enumerate(vision)}
    tensors["vision.pool.attn"] = pool_weights[0].contiguous()
    for i, maps in enumerate(text_maps):
        tensors.update({f"text.{i}.attn.{l}": a[0].contiguous() for l, a in enumerate(maps)})
    probs = torch.sigmoid(logits)
    tensors.update({"image_embeds": image_embeds.contiguous(), "text_embeds": text_embeds.contiguous(),
                    "logits_per_image": logits.contiguous(), "probs": probs.contiguous()})
    name = f"{checkpoint}.{os.path.splitext(os.path.basename(image))[0]}{'.own' if own_resolution else ''}"
    save_safetensors(os.path.join(GOLDEN_DIR, name + ".safetensors"), tensors)
    case = {"name": name, "checkpoint": checkpoint, "image": image, "own_resolution": own_resolution,
            "label_ids": labels, "vision_layers": len(vision), "vision_heads": vision[0].shape[1],
            "vision_tokens": vision[0].shape[-1], "grid": [pixels.shape[3] // p, pixels.shape[2] // p],
            "text_layers": len(text_maps[0]), "text_heads": text_maps[0][0].shape[1],
            "projection_dim": image_embeds.shape[0], "weights": stored_dtype, "note": note,
            "logit_bias": float(model.logit_bias), "probability": "sigmoid"}
    assert case["vision_tokens"] == case["grid"][0] * case["grid"][1]
    if texts:
        case["label_texts"] = texts
    CASES.append(case)
    peak = max(float(a.max()) for a in vision)
    print(f"  {name}: N = {vision[0].shape[-1]}, grid {case['grid'][0]} x {case['grid'][1]}, largest vision weight "
          f"{peak:.3f}, logits {[round(float(v), 4) for v in logits]}, probs {[round(float(v), 6) for v in probs]}")


def write_bad_configs(cfg, proc):
    """Two folders docs/errors.md refuses at config.json, before any weight is read (so they
    hold no weights): SigLIP without its pooling head, and a label embedding narrower than
    the picture's."""
    no_head = copy.deepcopy(cfg)
    no_head["vision_config"]["vision_use_head"] = False
    write_folder(os.path.join("bad", "siglip_no_head"), no_head, proc, None)
    narrow = copy.deepcopy(cfg)
    narrow["text_config"]["projection_size"] = 12
    write_folder(os.path.join("bad", "siglip_projection_size"), narrow, proc, None)


def main():
    torch.set_num_threads(1)
    shutil.rmtree(GOLDEN_DIR, ignore_errors=True)
    os.makedirs(GOLDEN_DIR)

    # google/siglip-base-patch16-224's layout: SiglipModel, F16, one file, the full English
    # vocabulary, 64 positions, equal tower widths (no projection_size).
    cfg = siglip_config(
        text=dict(hidden_size=16, intermediate_size=64, num_attention_heads=2, num_hidden_layers=2, vocab_size=32000),
        vision=dict(hidden_size=16, image_size=32, intermediate_size=64, num_attention_heads=2, num_hidden_layers=2,
                    patch_size=8),
        dtype="float16")
    proc = siglip_image_processor(32)
    ref = SiglipReference(with_defaults(cfg)).eval()
    randomise_siglip(ref, 31, *LOGITS_TINY)
    tensors = cast_floats(ref.hf_names(), torch.float16)
    write_folder("siglip_tiny", cfg, proc, tensors)
    load_reference(ref, tensors)
    labels, texts = [ids for _, ids in TINY_LABELS], [text for text, _ in TINY_LABELS]
    print("siglip_tiny (SiglipModel, gelu_pytorch_tanh, F16, base-patch16-224 configs)")
    for image in IMAGES:
        record("siglip_tiny", proc, ref, labels, texts, "F16",
               "reference on the F16 weights upcast; label 3 padded to 64 with </s> (id 1)", image)
    record("siglip_tiny", proc, ref, labels, texts, "F16",
           "reference on the F16 weights upcast, own resolution (positions resized bicubically, size=(h, w)); "
           "label 3 padded to 64 with </s> (id 1)", IMAGES[0], own_resolution=True)

    # google/siglip-so400m-patch14-384's layout: BF16 in two shards, a shrunk vocabulary and
    # 16 positions, a text tower narrower than the vision tower (projection_size).
    cfg = siglip_config(
        text=dict(hidden_size=12, intermediate_size=45, num_attention_heads=3, num_hidden_layers=2,
                  vocab_size=512, max_position_embeddings=16, projection_size=24),
        vision=dict(hidden_size=24, image_size=28, intermediate_size=90, num_attention_heads=3, num_hidden_layers=3,
                    patch_size=7),
        dtype="bfloat16")
    proc = siglip_image_processor(28)
    ref = SiglipReference(with_defaults(cfg)).eval()
    randomise_siglip(ref, 32, *LOGITS_SO400M)
    tensors = cast_floats(ref.hf_names(), torch.bfloat16)
    first = {k for k in tensors if k.startswith("text_model.") or k.startswith("vision_model.embeddings.")
             or k.startswith("vision_model.encoder.layers.0.")}
    write_folder("siglip_tiny_so400m_bf16", cfg, proc, tensors, shards=[first, set(tensors) - first])
    load_reference(ref, tensors)
    print("siglip_tiny_so400m_bf16 (SiglipModel, BF16 in two shards, projection_size 24)")
    record("siglip_tiny_so400m_bf16", proc, ref, SO400M_LABEL_IDS, None, "BF16",
           "reference on the BF16 weights upcast; text 12 wide projected to 24", IMAGES[0])

    write_bad_configs(cfg, proc)
    write_json(os.path.join(GOLDEN_DIR, "cases.json"), {"tolerance": 1e-4, "cases": CASES})
    print(f"wrote {len(CASES)} golden cases")
    # siglip_tiny's tokenizer files (rewritten above without them), and their goldens.
    import make_siglip_tokenizer
    make_siglip_tokenizer.write_all()


if __name__ == "__main__":
    main()
