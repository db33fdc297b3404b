#!/usr/bin/python3
"""Writes tiny ViT and DeiT checkpoints in Hugging Face's folder layout, what PyTorch
computes from them, and broken checkpoints that must be refused.

Run with Debian's PyTorch, torchvision, Pillow and NumPy
(python3-torch python3-torchvision python3-pil python3-numpy):

    /usr/bin/python3 tools/make_vit_checkpoints.py

tests/checkpoints/               folders as transformers' save_pretrained writes them:
                                 config.json, preprocessor_config.json, model.safetensors
                                 (or shards + model.safetensors.index.json)
  vit_tiny/                      torchvision.models.VisionTransformer(image_size=32,
                                 patch_size=8, num_layers=2, num_heads=2, hidden_dim=16,
                                 mlp_dim=32, num_classes=5), q/k/v split out of
                                 in_proj_weight, saved as ViTForImageClassification (F32,
                                 "vit." prefix, id2label, ViTImageProcessor: 32 px bilinear)
  vit_tiny_f16/                  ViTModel (no head, no prefix, with a pooler) in F16,
                                 hidden_act gelu_new, size as {"height", "width"}
  deit_tiny_distilled/           DeiTForImageClassificationWithTeacher (F32): [CLS] +
                                 distillation token, two heads averaged; the legacy
                                 DeiTFeatureExtractor config (40 px bicubic, centre crop 32,
                                 ImageNet mean/std)
  deit_tiny_distilled_bf16/      the same weights in BF16, in two shards with an index;
                                 no resize, only the centre crop (which pads small images)
  bad/*/                         each must fail with one line (see tests/cli/test_cli_checkpoints.cpp)
tests/golden/checkpoints/
  <checkpoint>.<image>.safetensors   attn.L [H, T, T] for every layer, logits [labels]
  cases.json                         the manifest the C++ test walks

The reference is PyTorch's own arithmetic on the weights as the file stores them (F16
and BF16 weights upcast to float32, as transformers' from_pretrained does by default),
and Pillow for the images, following transformers' ViTImageProcessor and
DeiTImageProcessor step by step. The ViT reference is torchvision's model itself; the
DeiT reference is `Reference` below, written from the published architecture (DeiT,
Touvron et al. 2021; transformers' modeling_deit.py) and checked here against
torchvision on the ViT weights. Nothing here calls Headscope.
"""

import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CHECKPOINT_DIR = os.path.join(ROOT, "tests", "checkpoints")
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "checkpoints")
IMAGES = ["tests/images/rgb.png", "tests/images/rgba.png"]   # 64x48 RGB, 37x29 RGBA

IMAGENET_DEFAULT_MEAN = [0.485, 0.456, 0.406]
IMAGENET_DEFAULT_STD = [0.229, 0.224, 0.225]


# --------------------------------------------------------------------------------------
# preprocessing: transformers' ViTImageProcessor / DeiTImageProcessor, step by step


def size_dict(size):
    """transformers' get_size_dict for the forms these processors accept."""
    if isinstance(size, int):
        return {"height": size, "width": size}
    return size


def center_crop(array, height, width):
    """transformers.image_transforms.center_crop on [H, W, C]: floor-centred window,
    zero padding where it reaches past the image."""
    orig_h, orig_w = array.shape[:2]
    top = (orig_h - height) // 2
    left = (orig_w - width) // 2
    if top >= 0 and left >= 0 and top + height <= orig_h and left + width <= orig_w:
        return array[top:top + height, left:left + width]
    new_h, new_w = max(height, orig_h), max(width, orig_w)
    padded = np.zeros((new_h, new_w) + array.shape[2:], dtype=array.dtype)
    top_pad = math.ceil((new_h - orig_h) / 2)
    left_pad = math.ceil((new_w - orig_w) / 2)
    padded[top_pad:top_pad + orig_h, left_pad:left_pad + orig_w] = array
    top += top_pad
    left += left_pad
    return padded[max(0, top):min(new_h, top + height), max(0, left):min(new_w, left + width)]


def preprocess(path, config):
    """pixel_values [1, 3, H, W] float32 as the processor of `config` makes them."""
    deit = "DeiT" in config.get("image_processor_type", config.get("feature_extractor_type", ""))
    image = Image.open(os.path.join(ROOT, path)).convert("RGB")
    if config.get("do_resize", True):
        size = size_dict(config.get("size", 256 if deit else 224))
        resample = config.get("resample", 3 if deit else 2)
        image = image.resize((size["width"], size["height"]), resample=resample)
    array = np.asarray(image)
    if deit and config.get("do_center_crop", True):
        crop = size_dict(config.get("crop_size", 224))
        array = center_crop(array, crop["height"], crop["width"])
    if config.get("do_rescale", True):
        # transformers' rescale: float64 product, cast to float32
        array = (array.astype(np.float64) * config.get("rescale_factor", 1 / 255)).astype(np.float32)
    else:
        array = array.astype(np.float32)
    if config.get("do_normalize", True):
        mean = np.array(config.get("image_mean", [0.5, 0.5, 0.5]), dtype=np.float32)
        std = np.array(config.get("image_std", [0.5, 0.5, 0.5]), dtype=np.float32)
        array = (array - mean) / std
    return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1))).unsqueeze(0)


# --------------------------------------------------------------------------------------
# the reference ViT / DeiT, on transformers' tensor names (without the model prefix)

ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
}


class Reference(nn.Module):
    """ViT (Dosovitskiy et al. 2021) and DeiT (Touvron et al. 2021) at inference:
    patches by a stride-P convolution, [CLS] (and DeiT's distillation token) prepended,
    learned positions added, pre-LN blocks (x += MHSA(LN(x)); x += MLP(LN(x))), a final
    LayerNorm, then the classifier on [CLS], or for DeiT with a teacher the mean of the
    [CLS] and distillation heads."""

    def __init__(self, c, head):
        super().__init__()
        self.c, self.head = c, head
        e, i, p = c["hidden_size"], c["intermediate_size"], c["patch_size"]
        self.n_prefix = 2 if c["model_type"] == "deit" else 1
        n = (c["image_size"] // p) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, e))
        if self.n_prefix == 2:
            self.distillation_token = nn.Parameter(torch.zeros(1, 1, e))
        self.position_embeddings = nn.Parameter(torch.zeros(1, n + self.n_prefix, e))
        self.projection = nn.Conv2d(3, e, p, stride=p)
        self.layers = nn.ModuleList()
        for _ in range(c["num_hidden_layers"]):
            layer = nn.Module()
            layer.layernorm_before = nn.LayerNorm(e, eps=c["layer_norm_eps"])
            layer.query, layer.key, layer.value = nn.Linear(e, e), nn.Linear(e, e), nn.Linear(e, e)
            layer.attention_output = nn.Linear(e, e)
            layer.layernorm_after = nn.LayerNorm(e, eps=c["layer_norm_eps"])
            layer.intermediate, layer.output = nn.Linear(e, i), nn.Linear(i, e)
            self.layers.append(layer)
        self.layernorm = nn.LayerNorm(e, eps=c["layer_norm_eps"])
        labels = len(c.get("id2label", {}))
        if head in ("classifier", "teacher"):
            self.classifier = nn.Linear(e, labels)
        if head == "teacher":
            self.distillation_classifier = nn.Linear(e, labels)
        if head == "pooler":
            self.pooler = nn.Linear(e, e)

    def hf_names(self):
        """{transformers name: parameter}"""
        names = {
            "embeddings.cls_token": self.cls_token,
            "embeddings.position_embeddings": self.position_embeddings,
            "embeddings.patch_embeddings.projection.weight": self.projection.weight,
            "embeddings.patch_embeddings.projection.bias": self.projection.bias,
            "layernorm.weight": self.layernorm.weight,
            "layernorm.bias": self.layernorm.bias,
        }
        if self.n_prefix == 2:
            names["embeddings.distillation_token"] = self.distillation_token
        for l, layer in enumerate(self.layers):
            pre = f"encoder.layer.{l}."
            for hf, mod in [("layernorm_before", layer.layernorm_before), ("attention.attention.query", layer.query),
                            ("attention.attention.key", layer.key), ("attention.attention.value", layer.value),
                            ("attention.output.dense", layer.attention_output), ("layernorm_after", layer.layernorm_after),
                            ("intermediate.dense", layer.intermediate), ("output.dense", layer.output)]:
                names[pre + hf + ".weight"] = mod.weight
                names[pre + hf + ".bias"] = mod.bias
        heads = {"classifier": {"classifier": "classifier"},
                 "teacher": {"cls_classifier": "classifier", "distillation_classifier": "distillation_classifier"},
                 "pooler": {"pooler.dense": "pooler"}}.get(self.head, {})
        for hf, attr in heads.items():
            names[hf + ".weight"] = getattr(self, attr).weight
            names[hf + ".bias"] = getattr(self, attr).bias
        return names

    def positions(self, pixels):
        """The position embeddings for the patch grid of `pixels`: as stored when it is the
        configured grid, otherwise interpolated as transformers' interpolate_pos_encoding
        does (bicubic, align_corners=False, to the new grid's size)."""
        p, side = self.c["patch_size"], self.c["image_size"] // self.c["patch_size"]
        grid_h, grid_w = pixels.shape[2] // p, pixels.shape[3] // p
        if grid_h == side and grid_w == side:
            return self.position_embeddings
        e = self.position_embeddings.shape[-1]
        prefix = self.position_embeddings[:, :self.n_prefix]
        grid = self.position_embeddings[:, self.n_prefix:].reshape(1, side, side, e).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, size=(grid_h, grid_w), mode="bicubic", align_corners=False)
        return torch.cat([prefix, grid.permute(0, 2, 3, 1).reshape(1, grid_h * grid_w, e)], dim=1)

    def forward(self, pixels):
        c = self.c
        h = c["num_attention_heads"]
        x = self.projection(pixels).flatten(2).transpose(1, 2)                    # [1, N, E]
        prefix = [self.cls_token] + ([self.distillation_token] if self.n_prefix == 2 else [])
        x = torch.cat(prefix + [x], dim=1) + self.positions(pixels)               # [1, T, E]
        attentions = []
        for layer in self.layers:
            y = layer.layernorm_before(x)
            b, t, e = y.shape
            split = lambda z: z.view(b, t, h, e // h).transpose(1, 2)             # [1, H, T, Dh]
            q, k, v = split(layer.query(y)), split(layer.key(y)), split(layer.value(y))
            weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(e // h), dim=-1)   # [1, H, T, T]
            attentions.append(weights)
            context = (weights @ v).transpose(1, 2).reshape(b, t, e)
            x = x + layer.attention_output(context)
            x = x + layer.output(ACTIVATIONS[c["hidden_act"]](layer.intermediate(layer.layernorm_after(x))))
        x = self.layernorm(x)
        logits = None
        if self.head == "classifier":
            logits = self.classifier(x[:, 0])
        elif self.head == "teacher":
            logits = (self.classifier(x[:, 0]) + self.distillation_classifier(x[:, 1])) / 2
        return attentions, logits


# --------------------------------------------------------------------------------------
# seeded weights


def randomise(module, seed):
    """Every parameter from N(0, s) with a seeded generator: LayerNorm weights near 1,
    projections scaled by 1.5 / sqrt(fan in) so the heads attend unevenly (a trained
    model's maps are peaky; uniform maps would test little)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            noise = torch.randn(p.shape, generator=g)
            if p.dim() == 1 and ("ln" in name or "layernorm" in name) and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * noise)
            elif p.dim() == 1:
                p.copy_(0.1 * noise)
            elif "token" in name or "pos" in name:
                p.copy_(0.5 * noise)
            else:
                fan_in = p[0].numel()
                p.copy_(1.5 / math.sqrt(fan_in) * noise)


def vit_config(hidden, layers, heads, inter, image, patch, act, eps, labels, architecture, model_type="vit",
               dtype="float32", **extra):
    config = {
        "architectures": [architecture],
        "attention_probs_dropout_prob": 0.0,
        "encoder_stride": patch,
        "hidden_act": act,
        "hidden_dropout_prob": 0.0,
        "hidden_size": hidden,
        "image_size": image,
        "initializer_range": 0.02,
        "intermediate_size": inter,
        "layer_norm_eps": eps,
        "model_type": model_type,
        "num_attention_heads": heads,
        "num_channels": 3,
        "num_hidden_layers": layers,
        "patch_size": patch,
        "qkv_bias": True,
        "torch_dtype": dtype,
        "transformers_version": "4.40.0",
    }
    if labels:
        config["id2label"] = {str(i): name for i, name in enumerate(labels)}
        config["label2id"] = {name: i for i, name in enumerate(labels)}
    config.update(extra)
    return dict(sorted(config.items()))


# --------------------------------------------------------------------------------------
# writing folders


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2, sort_keys=True)
        f.write("\n")


def cast(tensors, dtype):
    return {k: v.detach().to(dtype).contiguous() for k, v in tensors.items()}


def write_folder(name, config, processor, tensors, shards=None):
    """`tensors` {stored name: tensor}; `shards` a list of sets of names, or None for
    one model.safetensors."""
    folder = os.path.join(CHECKPOINT_DIR, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    if config is not None:
        write_json(os.path.join(folder, "config.json"), config)
    if processor is not None:
        write_json(os.path.join(folder, "preprocessor_config.json"), processor)
    if tensors is None:
        return folder
    if shards is None:
        save_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})
        return folder
    weight_map = {}
    total = 0
    for i, names in enumerate(shards):
        file = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        part = {k: tensors[k] for k in sorted(names)}
        save_safetensors(os.path.join(folder, file), part, {"format": "pt"})
        for k, v in part.items():
            weight_map[k] = file
            total += v.numel() * v.element_size()
    write_json(os.path.join(folder, "model.safetensors.index.json"),
               {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    return folder


def from_stored(tensors):
    """The weights as transformers' from_pretrained holds them by default: float32."""
    return {k: v.float() for k, v in tensors.items()}


def load_reference(reference, prefix, stored):
    state = {}
    names = reference.hf_names()
    for k, v in from_stored(stored).items():
        k = k[len(prefix):] if k.startswith(prefix) else k
        state[k] = v
    assert set(state) == set(names), set(state) ^ set(names)
    with torch.no_grad():
        for k, p in names.items():
            p.copy_(state[k].reshape(p.shape))


def preprocess_own_resolution(path, config, patch):
    """pixel_values at the image's own size, as DINO's visualize_attention.py takes them:
    RGB, cut at the right and bottom to whole patches, rescaled and normalised (no
    resize: the position embeddings are interpolated instead)."""
    image = Image.open(os.path.join(ROOT, path)).convert("RGB")
    array = np.asarray(image)
    h, w = array.shape[0] - array.shape[0] % patch, array.shape[1] - array.shape[1] % patch
    array = (array[:h, :w].astype(np.float64) * config.get("rescale_factor", 1 / 255)).astype(np.float32)
    mean = np.array(config.get("image_mean", [0.5, 0.5, 0.5]), dtype=np.float32)
    std = np.array(config.get("image_std", [0.5, 0.5, 0.5]), dtype=np.float32)
    array = (array - mean) / std
    return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1))).unsqueeze(0)


# --------------------------------------------------------------------------------------
# goldens

CASES = []


def golden_tensors(attentions, logits):
    """attn.L [H, T, T] of every layer (checked: rows sum to 1, nothing NaN) and logits [labels]."""
    tensors = {f"attn.{l}": a[0].contiguous() for l, a in enumerate(attentions)}
    for a in attentions:
        assert torch.isfinite(a).all() and torch.allclose(a.sum(-1), torch.ones(()), atol=1e-5)
    if logits is not None:
        tensors["logits"] = logits[0].contiguous()
    return tensors


def record(checkpoint, processor, run, labels, stored_dtype, note, own_resolution_patch=None):
    """With `own_resolution_patch` (P), the images run at their own size (headscope's
    --own-resolution) and the case names get ".own"."""
    for image in IMAGES:
        if own_resolution_patch is None:
            pixels = preprocess(image, processor)
        else:
            pixels = preprocess_own_resolution(image, processor, own_resolution_patch)
        with torch.no_grad():
            attentions, logits = run(pixels)
        tensors = golden_tensors(attentions, logits)
        t = attentions[0].shape[-1]
        name = f"{checkpoint}{'' if own_resolution_patch is None else '.own'}.{os.path.splitext(os.path.basename(image))[0]}"
        save_safetensors(os.path.join(GOLDEN_DIR, name + ".safetensors"), tensors)
        CASES.append({"name": name, "checkpoint": checkpoint, "image": image, "layers": len(attentions),
                      "heads": attentions[0].shape[1], "tokens": t, "labels": labels, "weights": stored_dtype,
                      "note": note, "own_resolution": own_resolution_patch is not None,
                      "grid": [pixels.shape[3] // (own_resolution_patch or 1), pixels.shape[2] // (own_resolution_patch or 1)]
                      if own_resolution_patch else None})
        peak = max(float(a.max()) for a in attentions)
        print(f"  {name}: T = {t}, largest attention weight {peak:.3f}"
              + ("" if logits is None else f", logits {[round(float(v), 4) for v in logits[0]]}"))


def torchvision_attention(model, pixels):
    """Runs torchvision's ViT and asks each block's nn.MultiheadAttention for its
    per-head weights on the input it was given."""
    inputs = []
    hooks = [layer.ln_1.register_forward_hook(lambda m, i, o: inputs.append(o))
             for layer in model.encoder.layers]
    logits = model(pixels)
    for h in hooks:
        h.remove()
    attentions = []
    for layer, y in zip(model.encoder.layers, inputs):
        _, w = layer.self_attention(y, y, y, need_weights=True, average_attn_weights=False)
        attentions.append(w)
    return attentions, logits


def vit_from_torchvision(model):
    """torchvision's state dict under transformers' ViTForImageClassification names."""
    s = model.state_dict()
    e = s["class_token"].shape[-1]
    out = {
        "vit.embeddings.cls_token": s["class_token"],
        "vit.embeddings.position_embeddings": s["encoder.pos_embedding"],
        "vit.embeddings.patch_embeddings.projection.weight": s["conv_proj.weight"],
        "vit.embeddings.patch_embeddings.projection.bias": s["conv_proj.bias"],
        "vit.layernorm.weight": s["encoder.ln.weight"],
        "vit.layernorm.bias": s["encoder.ln.bias"],
        "classifier.weight": s["heads.head.weight"],
        "classifier.bias": s["heads.head.bias"],
    }
    for l in range(len(model.encoder.layers)):
        tv = f"encoder.layers.encoder_layer_{l}."
        hf = f"vit.encoder.layer.{l}."
        for part, rows in zip(["query", "key", "value"], range(3)):
            out[hf + f"attention.attention.{part}.weight"] = s[tv + "self_attention.in_proj_weight"][rows * e:(rows + 1) * e]
            out[hf + f"attention.attention.{part}.bias"] = s[tv + "self_attention.in_proj_bias"][rows * e:(rows + 1) * e]
        pairs = [("attention.output.dense", "self_attention.out_proj"), ("layernorm_before", "ln_1"),
                 ("layernorm_after", "ln_2"), ("intermediate.dense", "mlp.0"), ("output.dense", "mlp.3")]
        for h, t in pairs:
            out[hf + h + ".weight"] = s[tv + t + ".weight"]
            out[hf + h + ".bias"] = s[tv + t + ".bias"]
    return {k: v.clone().contiguous() for k, v in out.items()}


def max_diff(a, b):
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


def main():
    torch.set_num_threads(1)
    os.makedirs(CHECKPOINT_DIR, exist_ok=True)
    shutil.rmtree(GOLDEN_DIR, ignore_errors=True)
    os.makedirs(GOLDEN_DIR)

    # (a) ViT from torchvision, written as ViTForImageClassification.
    torch.manual_seed(0)
    tv = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16,
                                              mlp_dim=32, num_classes=5).eval()
    randomise(tv, seed=1)
    vit_labels = ["tabby cat", "golden retriever", "espresso", "volcano", "daisy"]
    vit_cfg = vit_config(16, 2, 2, 32, 32, 8, "gelu", 1e-6, vit_labels, "ViTForImageClassification")
    vit_proc = {"do_normalize": True, "do_rescale": True, "do_resize": True, "image_mean": [0.5, 0.5, 0.5],
                "image_processor_type": "ViTImageProcessor", "image_std": [0.5, 0.5, 0.5], "resample": 2,
                "rescale_factor": 1 / 255, "size": 32}
    vit_tensors = vit_from_torchvision(tv)
    write_folder("vit_tiny", vit_cfg, vit_proc, vit_tensors)
    print("vit_tiny (torchvision VisionTransformer, F32)")
    record("vit_tiny", vit_proc, lambda px: torchvision_attention(tv, px), vit_labels, "F32", "torchvision")

    # The reference implementation must reproduce torchvision on the same weights.
    ref = Reference(vit_cfg, "classifier").eval()
    load_reference(ref, "vit.", vit_tensors)
    pixels = preprocess(IMAGES[0], vit_proc)
    with torch.no_grad():
        a_tv, l_tv = torchvision_attention(tv, pixels)
        a_ref, l_ref = ref(pixels)
    check = max(max_diff(a_tv, a_ref), max_diff([l_tv], [l_ref]))
    print(f"  Reference vs torchvision on vit_tiny: max |diff| = {check:.2e}")
    assert check < 1e-5
    print("vit_tiny at the images' own resolution (position embeddings interpolated)")
    record("vit_tiny", vit_proc, ref, vit_labels, "F32", "reference, own resolution", own_resolution_patch=8)

    # ViTModel in F16: no head (a pooler instead), no prefix, gelu_new, size as a dict.
    f16_cfg = vit_config(16, 2, 2, 32, 32, 8, "gelu_new", 1e-6, None, "ViTModel", dtype="float16")
    f16_proc = dict(vit_proc, size={"height": 32, "width": 32})
    f16_ref = Reference(f16_cfg, "pooler").eval()
    base = {k[len("vit."):]: v for k, v in vit_tensors.items() if k.startswith("vit.")}
    g = torch.Generator().manual_seed(5)
    base["pooler.dense.weight"] = torch.randn(16, 16, generator=g) * 0.25
    base["pooler.dense.bias"] = torch.randn(16, generator=g) * 0.1
    f16_tensors = cast(base, torch.float16)
    write_folder("vit_tiny_f16", f16_cfg, f16_proc, f16_tensors)
    load_reference(f16_ref, "", f16_tensors)
    print("vit_tiny_f16 (ViTModel, F16 weights, gelu_new)")
    record("vit_tiny_f16", f16_proc, f16_ref, [], "F16", "reference on the F16 weights upcast to float32")

    # (b) DeiT distilled, from the reference implementation.
    deit_labels = ["kite", "lighthouse", "teapot", "zebra"]
    deit_cfg = vit_config(24, 2, 3, 48, 32, 8, "gelu", 1e-12, deit_labels, "DeiTForImageClassificationWithTeacher",
                          model_type="deit", pooler_act="tanh", pooler_output_size=24)
    deit_proc = {"crop_size": 32, "do_center_crop": True, "do_normalize": True, "do_resize": True,
                 "feature_extractor_type": "DeiTFeatureExtractor", "image_mean": IMAGENET_DEFAULT_MEAN,
                 "image_std": IMAGENET_DEFAULT_STD, "resample": 3, "size": 40}
    deit = Reference(deit_cfg, "teacher").eval()
    randomise(deit, seed=2)
    hf = deit.hf_names()
    deit_tensors = {("deit." + k if not k.split(".")[0].endswith("classifier") else k): v.detach().clone()
                    for k, v in hf.items()}
    write_folder("deit_tiny_distilled", deit_cfg, deit_proc, deit_tensors)
    print("deit_tiny_distilled (DeiTForImageClassificationWithTeacher, F32)")
    record("deit_tiny_distilled", deit_proc, deit, deit_labels, "F32", "reference")
    print("deit_tiny_distilled at the images' own resolution")
    record("deit_tiny_distilled", deit_proc, deit, deit_labels, "F32", "reference, own resolution",
           own_resolution_patch=8)

    # The same weights in BF16, in two shards; only a centre crop (small images are padded).
    bf16_cfg = dict(deit_cfg, torch_dtype="bfloat16")
    bf16_proc = {"crop_size": {"height": 32, "width": 32}, "do_center_crop": True, "do_normalize": True,
                 "do_rescale": True, "do_resize": False, "image_mean": IMAGENET_DEFAULT_MEAN,
                 "image_processor_type": "DeiTImageProcessor", "image_std": IMAGENET_DEFAULT_STD, "resample": 3,
                 "rescale_factor": 1 / 255, "size": {"height": 40, "width": 40}}
    bf16_tensors = cast(deit_tensors, torch.bfloat16)
    first = {k for k in bf16_tensors if k.startswith("deit.embeddings.") or k.startswith("deit.encoder.layer.0.")}
    write_folder("deit_tiny_distilled_bf16", bf16_cfg, bf16_proc, bf16_tensors,
                 shards=[first, set(bf16_tensors) - first])
    bf16_ref = Reference(deit_cfg, "teacher").eval()
    load_reference(bf16_ref, "deit.", bf16_tensors)
    print("deit_tiny_distilled_bf16 (BF16 weights, 2 shards, crop only)")
    record("deit_tiny_distilled_bf16", bf16_proc, bf16_ref, deit_labels, "BF16",
           "reference on the BF16 weights upcast to float32")

    # What rounding the weights costs, against the F32 model on the same input (for the
    # README; the tests compare each checkpoint with its own reference).
    for name, low, full, proc in [("F16", f16_ref, ref, vit_proc), ("BF16", bf16_ref, deit, bf16_proc)]:
        px = preprocess(IMAGES[0], proc)
        with torch.no_grad():
            a_low, _ = low(px)
            a_full, _ = full(px)
        print(f"  {name} weights vs F32 weights, attention: max |diff| = {max_diff(a_low, a_full):.2e}")

    write_bad_checkpoints(vit_cfg, vit_proc, vit_tensors)
    write_json(os.path.join(GOLDEN_DIR, "cases.json"), {"tolerance": 1e-4, "cases": CASES})
    total = 0
    for dirpath, _, files in os.walk(CHECKPOINT_DIR):
        total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files)
    print(f"wrote {len(CASES)} golden cases; tests/checkpoints holds {total / 1024:.0f} KB")


def write_bad_checkpoints(cfg, proc, tensors):
    bad = lambda name: "bad/" + name
    # Each folder is replaced by write_folder; bad/ also holds the other scripts' folders.

    missing = dict(tensors)
    del missing["vit.encoder.layer.1.attention.attention.key.bias"]
    write_folder(bad("missing_tensor"), cfg, proc, missing)

    wrong = dict(tensors)
    wrong["vit.encoder.layer.0.intermediate.dense.weight"] = wrong["vit.encoder.layer.0.intermediate.dense.weight"].t().contiguous()
    write_folder(bad("wrong_shape"), cfg, proc, wrong)

    write_folder(bad("config_mismatch"), dict(cfg, hidden_size=24), proc, tensors)

    six = ["a", "b", "c", "d", "e", "f"]
    write_folder(bad("labels_mismatch"),
                 dict(cfg, id2label={str(i): n for i, n in enumerate(six)}, label2id={n: i for i, n in enumerate(six)}),
                 proc, tensors)

    extra = dict(tensors)
    extra["vit.encoder.layer.0.attention.attention.query.weights"] = tensors["vit.encoder.layer.0.attention.attention.query.weight"]
    write_folder(bad("unknown_tensor"), cfg, proc, extra)

    first = {k for k in tensors if k.startswith("vit.embeddings.")}
    folder = write_folder(bad("truncated_shard"), cfg, proc, tensors, shards=[first, set(tensors) - first])
    shard = os.path.join(folder, "model-00002-of-00002.safetensors")
    with open(shard, "rb") as f:
        data = f.read()
    with open(shard, "wb") as f:
        f.write(data[:len(data) - 100])

    folder = write_folder(bad("pickle_only"), cfg, proc, None)
    torch.save({k: v.clone() for k, v in tensors.items()}, os.path.join(folder, "pytorch_model.bin"))

    write_folder(bad("unsupported_type"), dict(cfg, model_type="swin", architectures=["SwinModel"]), proc, None)
    write_folder(bad("heads_not_dividing"), dict(cfg, num_attention_heads=3), proc, None)
    write_folder(bad("crop_disagrees"), cfg, dict(proc, size=24), tensors)


if __name__ == "__main__":
    main()
