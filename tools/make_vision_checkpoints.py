#!/usr/bin/python3
"""Writes tiny DINOv2 and DINOv2-with-registers checkpoints in Hugging Face's folder layout,
and what PyTorch computes from them.

Run with Debian's PyTorch, Pillow and NumPy (python3-torch python3-pil python3-numpy):

    /usr/bin/python3 tools/make_vision_checkpoints.py

tests/checkpoints/               folders as transformers' save_pretrained writes them:
                                 config.json (every field of the named real checkpoint, sizes
                                 shrunk), preprocessor_config.json, model.safetensors (or shards)
  dinov2_tiny/                   facebook/dinov2-small's config (Dinov2Model, no prefix, F32):
                                 positions learned at 42 px (6 x 6 patches of 7 px), pictures
                                 resized by their shortest edge to 32 px (bicubic) and cropped to
                                 28 px (4 x 4 patches): the positions are resized, as at 224 px
                                 for the real 518 px ones
  dinov2_tiny_swiglu_bf16/       facebook/dinov2-giant's config (use_swiglu_ffn) saved as
                                 Dinov2ForImageClassification ("dinov2." prefix, 3 labels), BF16,
                                 two shards with an index
  dinov2_reg_tiny/               facebook/dinov2-with-registers-small's config (4 registers) as
                                 Dinov2WithRegistersForImageClassification (F32): the positions
                                 resized with antialiasing, the classifier's mean without registers
  dinov2_reg_tiny_f16/           Dinov2WithRegistersModel in F16, 2 registers
tests/golden/vision/
  <checkpoint>[.own].<image>.safetensors   attn.L [H, T, T] for every layer, logits [labels],
                                           output_norms [T] (each row's norm before the final norm)
  cases.json                               the manifest the C++ tests walk

The reference is `Dinov2Reference` below, written from transformers' modeling_dinov2.py and
modeling_dinov2_with_registers.py (the embeddings' interpolate_pos_encoding, LayerScale, the
SwiGLU MLP, the classifier on [CLS] and the patches' mean), on the weights as the file stores
them upcast to float32 as from_pretrained does; pictures follow BitImageProcessor's slow path
in Pillow step by step. Nothing here calls Headscope.
"""

import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)
from make_vit_checkpoints import (IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, IMAGES, ROOT,  # noqa: E402
                                  cast, center_crop, from_stored, golden_tensors, write_folder,
                                  write_json)

GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "vision")


# --------------------------------------------------------------------------------------
# preprocessing: transformers' BitImageProcessor (slow path), step by step


def resized_size(width, height, shortest_edge):
    """get_resize_output_image_size(default_to_square=False): (width, height)."""
    short, long = (width, height) if width <= height else (height, width)
    new_short, new_long = shortest_edge, int(shortest_edge * long / short)
    return (new_short, new_long) if width <= height else (new_long, new_short)


def preprocess(path, config, own_resolution_patch=None):
    """pixel_values [1, 3, H, W] float32 as BitImageProcessor makes them (convert to RGB,
    resize by the shortest edge with PIL, centre crop, rescale in float64, normalise in
    float32); with `own_resolution_patch` (P) the picture at its own size cut to whole
    patches instead of resized and cropped (headscope's --own-resolution)."""
    image = Image.open(os.path.join(ROOT, path)).convert("RGB")
    if own_resolution_patch is None:
        size = config["size"]["shortest_edge"]
        image = image.resize(resized_size(image.width, image.height, size), resample=config["resample"])
        array = np.asarray(image)
        crop = config["crop_size"]
        array = center_crop(array, crop["height"], crop["width"])
    else:
        array = np.asarray(image)
        p = own_resolution_patch
        array = array[:array.shape[0] - array.shape[0] % p, :array.shape[1] - array.shape[1] % p]
    array = (array.astype(np.float64) * config["rescale_factor"]).astype(np.float32)
    mean = np.array(config["image_mean"], dtype=np.float32)
    std = np.array(config["image_std"], dtype=np.float32)
    array = (array - mean) / std
    return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1))).unsqueeze(0)


# --------------------------------------------------------------------------------------
# the reference DINOv2, on transformers' tensor names (without the model prefix)


class Dinov2Reference(nn.Module):
    """DINOv2 (Oquab et al. 2023) and DINOv2 with registers (Darcet et al. 2024) at
    inference, as modeling_dinov2.py / modeling_dinov2_with_registers.py compute them:
    patches by a stride-P convolution, [CLS] prepended, learned positions added (resized to
    the picture's grid unless it is the learned one of a square picture: bicubic, and with
    registers antialiased), the registers put after [CLS] with no position, pre-LN blocks
    with LayerScale (x += g1 * attn(norm1(x)); x += g2 * mlp(norm2(x))), GELU or SwiGLU MLPs,
    a final LayerNorm, and the classifier on [CLS] and the mean of the patch rows."""

    def __init__(self, c, classifier):
        super().__init__()
        self.c, self.has_classifier = c, classifier
        e, p = c["hidden_size"], c["patch_size"]
        self.registers = c["model_type"] == "dinov2_with_registers"
        self.n_registers = c.get("num_register_tokens", 4) if self.registers else 0
        self.swiglu = c.get("use_swiglu_ffn", False)
        hidden = int(e * c["mlp_ratio"])
        if self.swiglu:
            hidden = (int(hidden * 2 / 3) + 7) // 8 * 8
        n = (c["image_size"] // p) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, e))
        self.mask_token = nn.Parameter(torch.zeros(1, e))
        if self.registers:
            self.register_tokens = nn.Parameter(torch.zeros(1, self.n_registers, e))
        self.position_embeddings = nn.Parameter(torch.zeros(1, n + 1, e))
        self.projection = nn.Conv2d(3, e, p, stride=p)
        self.layers = nn.ModuleList()
        eps = c["layer_norm_eps"]
        for _ in range(c["num_hidden_layers"]):
            layer = nn.Module()
            layer.norm1 = nn.LayerNorm(e, eps=eps)
            layer.query, layer.key, layer.value = nn.Linear(e, e), nn.Linear(e, e), nn.Linear(e, e)
            layer.attention_output = nn.Linear(e, e)
            layer.lambda1 = nn.Parameter(torch.ones(e))
            layer.norm2 = nn.LayerNorm(e, eps=eps)
            if self.swiglu:
                layer.weights_in, layer.weights_out = nn.Linear(e, 2 * hidden), nn.Linear(hidden, e)
            else:
                layer.fc1, layer.fc2 = nn.Linear(e, hidden), nn.Linear(hidden, e)
            layer.lambda2 = nn.Parameter(torch.ones(e))
            self.layers.append(layer)
        self.layernorm = nn.LayerNorm(e, eps=eps)
        if classifier:
            self.classifier = nn.Linear(2 * e, len(c["id2label"]))

    def hf_names(self):
        """{transformers name: parameter}"""
        names = {
            "embeddings.cls_token": self.cls_token,
            "embeddings.mask_token": self.mask_token,
            "embeddings.position_embeddings": self.position_embeddings,
            "embeddings.patch_embeddings.projection.weight": self.projection.weight,
            "embeddings.patch_embeddings.projection.bias": self.projection.bias,
            "layernorm.weight": self.layernorm.weight,
            "layernorm.bias": self.layernorm.bias,
        }
        if self.registers:
            names["embeddings.register_tokens"] = self.register_tokens
        for l, layer in enumerate(self.layers):
            pre = f"encoder.layer.{l}."
            mlp = ([("mlp.weights_in", layer.weights_in), ("mlp.weights_out", layer.weights_out)] if self.swiglu
                   else [("mlp.fc1", layer.fc1), ("mlp.fc2", layer.fc2)])
            for hf, mod in [("norm1", layer.norm1), ("attention.attention.query", layer.query),
                            ("attention.attention.key", layer.key), ("attention.attention.value", layer.value),
                            ("attention.output.dense", layer.attention_output), ("norm2", layer.norm2)] + mlp:
                names[pre + hf + ".weight"] = mod.weight
                names[pre + hf + ".bias"] = mod.bias
            names[pre + "layer_scale1.lambda1"] = layer.lambda1
            names[pre + "layer_scale2.lambda1"] = layer.lambda2
        if self.has_classifier:
            names["classifier.weight"] = self.classifier.weight
            names["classifier.bias"] = self.classifier.bias
        return names

    def interpolate_pos_encoding(self, embeddings, height, width):
        """Dinov2Embeddings.interpolate_pos_encoding (with registers: antialias=True)."""
        num_patches = embeddings.shape[1] - 1
        num_positions = self.position_embeddings.shape[1] - 1
        if num_patches == num_positions and height == width:
            return self.position_embeddings
        class_pos_embed = self.position_embeddings[:, :1]
        patch_pos_embed = self.position_embeddings[:, 1:]
        dim = embeddings.shape[-1]
        new_height, new_width = height // self.c["patch_size"], width // self.c["patch_size"]
        side = int(num_positions ** 0.5)
        patch_pos_embed = patch_pos_embed.reshape(1, side, side, dim).permute(0, 3, 1, 2)
        patch_pos_embed = F.interpolate(patch_pos_embed.to(torch.float32), size=(new_height, new_width),
                                        mode="bicubic", align_corners=False, antialias=self.registers)
        patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).reshape(1, -1, dim)
        return torch.cat((class_pos_embed, patch_pos_embed), dim=1)

    def mlp(self, layer, x):
        if self.swiglu:
            x1, x2 = layer.weights_in(x).chunk(2, dim=-1)
            return layer.weights_out(F.silu(x1) * x2)
        return layer.fc2(F.gelu(layer.fc1(x)))

    def forward(self, pixels):
        c = self.c
        h = c["num_attention_heads"]
        height, width = pixels.shape[2], pixels.shape[3]
        x = self.projection(pixels).flatten(2).transpose(1, 2)                  # [1, N, E]
        x = torch.cat([self.cls_token, x], dim=1)
        x = x + self.interpolate_pos_encoding(x, height, width)
        if self.registers:
            x = torch.cat([x[:, :1], self.register_tokens, x[:, 1:]], dim=1)     # [1, 1 + R + N, E]
        attentions = []
        for layer in self.layers:
            y = layer.norm1(x)
            b, t, e = y.shape
            split = lambda z: z.view(b, t, h, e // h).transpose(1, 2)           # [1, H, T, Dh]
            q, k, v = split(layer.query(y)), split(layer.key(y)), split(layer.value(y))
            weights = torch.softmax(q @ k.transpose(-1, -2) * (e // h) ** -0.5, dim=-1)
            attentions.append(weights)
            context = (weights @ v).transpose(1, 2).reshape(b, t, e)
            x = x + layer.lambda1 * layer.attention_output(context)
            x = x + layer.lambda2 * self.mlp(layer, layer.norm2(x))
        self.output_norms = x[0].norm(dim=-1)   # before the final norm: the high-norm tokens' measure
        x = self.layernorm(x)
        logits = None
        if self.has_classifier:
            patches = x[:, 1 + self.n_registers:]
            logits = self.classifier(torch.cat([x[:, 0], patches.mean(dim=1)], dim=1))
        return attentions, logits


def randomise(module, seed):
    """Every parameter from N(0, s) with a seeded generator: norms near 1, LayerScale near
    0.5 (trained ones are small), tokens and positions 0.5, projections 1.5 / sqrt(fan in)
    so the heads attend unevenly."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            noise = torch.randn(p.shape, generator=g)
            if name.endswith("lambda1") or name.endswith("lambda2"):
                p.copy_(0.5 + 0.2 * noise)
            elif p.dim() == 1 and "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * noise)
            elif p.dim() == 1:
                p.copy_(0.1 * noise)
            elif "token" in name or "position" in name:
                p.copy_(0.5 * noise)
            else:
                p.copy_(1.5 / math.sqrt(p[0].numel()) * noise)


# --------------------------------------------------------------------------------------
# configs: every field of the named real checkpoint, sizes shrunk


def dinov2_config(architecture, hidden, heads, layers, image, patch, swiglu=False, labels=None, dtype="float32"):
    """facebook/dinov2-small's (and -giant's) config.json, shrunk."""
    config = {
        "architectures": [architecture],
        "attention_probs_dropout_prob": 0.0,
        "drop_path_rate": 0.0,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "hidden_size": hidden,
        "image_size": image,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-06,
        "layerscale_value": 1.0,
        "mlp_ratio": 4,
        "model_type": "dinov2",
        "num_attention_heads": heads,
        "num_channels": 3,
        "num_hidden_layers": layers,
        "patch_size": patch,
        "qkv_bias": True,
        "torch_dtype": dtype,
        "transformers_version": "4.32.0.dev0",
        "use_swiglu_ffn": swiglu,
    }
    return with_labels(config, labels)


def registers_config(architecture, hidden, heads, layers, image, patch, registers, labels=None, dtype="float32"):
    """facebook/dinov2-with-registers-small's config.json (as save_pretrained writes the
    current class: the backbone fields too), shrunk."""
    config = dinov2_config(architecture, hidden, heads, layers, image, patch, labels=labels, dtype=dtype)
    config.update({
        "apply_layernorm": True,
        "model_type": "dinov2_with_registers",
        "num_register_tokens": registers,
        "out_features": [f"stage{layers}"],
        "out_indices": [layers],
        "reshape_hidden_states": True,
        "stage_names": ["stem"] + [f"stage{i}" for i in range(1, layers + 1)],
        "transformers_version": "4.48.0.dev0",
    })
    return dict(sorted(config.items()))


def with_labels(config, labels):
    if labels:
        config["id2label"] = {str(i): name for i, name in enumerate(labels)}
        config["label2id"] = {name: i for i, name in enumerate(labels)}
    return dict(sorted(config.items()))


def bit_processor(shortest_edge, crop, processor="BitImageProcessor", mean=IMAGENET_DEFAULT_MEAN,
                  std=IMAGENET_DEFAULT_STD):
    """facebook/dinov2-small's preprocessor_config.json, shrunk; CLIPImageProcessor writes the
    same fields (its class name, OpenAI's mean and std)."""
    return {
        "crop_size": {"height": crop, "width": crop},
        "do_center_crop": True,
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": mean,
        "image_processor_type": processor,
        "image_std": std,
        "resample": 3,
        "rescale_factor": 0.00392156862745098,
        "size": {"shortest_edge": shortest_edge},
    }


# --------------------------------------------------------------------------------------
# goldens

CASES = []


def load_reference(reference, prefix, stored):
    names = reference.hf_names()
    state = {(k[len(prefix):] if prefix and k.startswith(prefix) else k): v for k, v in from_stored(stored).items()}
    assert set(state) == set(names), set(state) ^ set(names)
    with torch.no_grad():
        for k, p in names.items():
            p.copy_(state[k].reshape(p.shape))


def stored_names(reference, prefix):
    """The reference's tensors under the checkpoint's names: the backbone's with `prefix`,
    the classifier's without."""
    return {(k if k.startswith("classifier.") else prefix + k): v.detach().clone()
            for k, v in reference.hf_names().items()}


def record(checkpoint, processor, model, labels, stored_dtype, note, own_resolution_patch=None):
    for image in IMAGES:
        pixels = preprocess(image, processor, own_resolution_patch)
        with torch.no_grad():
            attentions, logits = model(pixels)
        tensors = golden_tensors(attentions, logits)
        tensors["output_norms"] = model.output_norms.contiguous()
        t = attentions[0].shape[-1]
        own = own_resolution_patch is not None
        name = f"{checkpoint}{'.own' if own else ''}.{os.path.splitext(os.path.basename(image))[0]}"
        save_safetensors(os.path.join(GOLDEN_DIR, name + ".safetensors"), tensors)
        p = model.c["patch_size"]
        CASES.append({"name": name, "checkpoint": checkpoint, "image": image, "layers": len(attentions),
                      "heads": attentions[0].shape[1], "tokens": t, "labels": labels, "weights": stored_dtype,
                      "note": note, "own_resolution": own, "registers": model.n_registers,
                      "grid": [pixels.shape[3] // p, pixels.shape[2] // p]})
        print(f"  {name}: T = {t}, grid {pixels.shape[3] // p} x {pixels.shape[2] // p}"
              + ("" if logits is None else f", logits {[round(float(v), 4) for v in logits[0]]}"))


def main():
    torch.set_num_threads(1)
    shutil.rmtree(GOLDEN_DIR, ignore_errors=True)
    os.makedirs(GOLDEN_DIR)

    # DINOv2 small's layout: Dinov2Model, no prefix, F32; positions learned for 6 x 6 patches,
    # pictures of 4 x 4 (resized positions), and at their own size (9 x 6, 5 x 4).
    cfg = dinov2_config("Dinov2Model", 16, 2, 2, 42, 7)
    proc = bit_processor(32, 28)
    ref = Dinov2Reference(cfg, classifier=False).eval()
    randomise(ref, seed=11)
    tensors = stored_names(ref, "")
    write_folder("dinov2_tiny", cfg, proc, tensors)
    print("dinov2_tiny (Dinov2Model, F32)")
    record("dinov2_tiny", proc, ref, [], "F32", "reference")
    record("dinov2_tiny", proc, ref, [], "F32", "reference, own resolution", own_resolution_patch=7)

    # DINOv2 giant's SwiGLU, as Dinov2ForImageClassification, BF16, two shards.
    labels = ["barn owl", "fire truck", "sea anemone"]
    cfg = dinov2_config("Dinov2ForImageClassification", 24, 3, 2, 42, 7, swiglu=True, labels=labels,
                        dtype="bfloat16")
    ref = Dinov2Reference(cfg, classifier=True).eval()
    randomise(ref, seed=12)
    tensors = cast(stored_names(ref, "dinov2."), torch.bfloat16)
    first = {k for k in tensors if k.startswith("dinov2.embeddings.") or k.startswith("dinov2.encoder.layer.0.")}
    write_folder("dinov2_tiny_swiglu_bf16", cfg, proc, tensors, shards=[first, set(tensors) - first])
    load_reference(ref, "dinov2.", tensors)
    print("dinov2_tiny_swiglu_bf16 (Dinov2ForImageClassification, SwiGLU, BF16 in two shards)")
    record("dinov2_tiny_swiglu_bf16", proc, ref, labels, "BF16", "reference on the BF16 weights upcast")

    # With registers: 4 of them, a classifier that leaves them out of its mean; antialiased
    # positions, shrunk (processed pictures) and grown (own resolution).
    labels = ["lighthouse", "tabby cat"]
    cfg = registers_config("Dinov2WithRegistersForImageClassification", 16, 2, 2, 42, 7, 4, labels=labels)
    ref = Dinov2Reference(cfg, classifier=True).eval()
    randomise(ref, seed=13)
    tensors = stored_names(ref, "dinov2_with_registers.")
    write_folder("dinov2_reg_tiny", cfg, proc, tensors)
    print("dinov2_reg_tiny (Dinov2WithRegistersForImageClassification, 4 registers, F32)")
    record("dinov2_reg_tiny", proc, ref, labels, "F32", "reference")
    record("dinov2_reg_tiny", proc, ref, labels, "F32", "reference, own resolution", own_resolution_patch=7)

    # Dinov2WithRegistersModel in F16, 2 registers, positions learned for 4 x 4 patches: a
    # processed picture keeps them as stored (the learned grid of a square picture).
    cfg = registers_config("Dinov2WithRegistersModel", 16, 2, 2, 28, 7, 2, dtype="float16")
    ref = Dinov2Reference(cfg, classifier=False).eval()
    randomise(ref, seed=14)
    tensors = cast(stored_names(ref, ""), torch.float16)
    write_folder("dinov2_reg_tiny_f16", cfg, proc, tensors)
    load_reference(ref, "", tensors)
    print("dinov2_reg_tiny_f16 (Dinov2WithRegistersModel, 2 registers, F16)")
    record("dinov2_reg_tiny_f16", proc, ref, [], "F16", "reference on the F16 weights upcast")

    write_json(os.path.join(GOLDEN_DIR, "cases.json"), {"tolerance": 1e-4, "cases": CASES})
    print(f"wrote {len(CASES)} golden cases")


if __name__ == "__main__":
    main()
