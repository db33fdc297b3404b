#!/usr/bin/python3
"""Writes tiny CLIP checkpoints in Hugging Face's folder layout, and what PyTorch computes
from them.

Run with Debian's PyTorch, Pillow and NumPy (python3-torch python3-pil python3-numpy):

    /usr/bin/python3 tools/make_clip_checkpoints.py

tests/checkpoints/               folders as transformers' save_pretrained writes them:
                                 config.json, preprocessor_config.json, model.safetensors
                                 (or shards + model.safetensors.index.json)
  clip_tiny/                     openai/clip-vit-base-patch32's config.json, every field of the
                                 hub file (as copied verbatim in whaler404/Hf-Learn's clip.md,
                                 "projection_dim" in both towers; the verbose 4.16 form: each tower's
                                 generation fields, "text_config_dict": null, top-level
                                 "transformers_version": null, no top-level torch_dtype), sizes
                                 shrunk: vision 16 wide, 2 heads, 2 layers, 28 px in 7 px patches
                                 (4 x 4); text 8 wide, 2 heads, 2 layers, 77 positions, the real
                                 49408-token vocabulary (the CLIP tokenizer's ids are accepted);
                                 projection 8; quick_gelu; eos_token_id 2 as in the real file
                                 (legacy pooling at the argmax of the ids). CLIPModel, F16, one
                                 file, with the int64 position_ids buffers the old checkpoint
                                 stores (text [1, 77], vision [1, 17]; transformers reports the
                                 real file's as unexpected keys) and logit_scale as a 0-dim
                                 tensor holding the trained 4.6052. The legacy
                                 CLIPFeatureExtractor preprocessor_config.json ("size": 32,
                                 "crop_size": 28, resample 3, no rescale_factor).
  clip_tiny_gelu_bf16/           laion/CLIP-ViT-B-32-laion2B-s34B-b79K as transformers 4.37.2's
                                 save_pretrained writes it (the compact form: only the fields that
                                 differ from the config classes' defaults, so the loader has to
                                 supply the rest; field set from a real 4.37.2 save of that model,
                                 strollingorange/roomLuxuryAnnotater's config.json), with the
                                 shrunk sizes the same save writes: hidden_act "gelu" in both
                                 towers, vision 24 wide, 3 heads, 3 layers, 32 px in 8 px patches,
                                 text 12 wide, 3 heads, 2 layers, 16 positions, projection 16, the
                                 vocabulary shrunk to 512 and with it bos_token_id 510 and
                                 eos_token_id 511 (pooling at the FIRST 511, not the legacy
                                 argmax). BF16 in two shards with an index, no position_ids
                                 buffers (not persistent since transformers 4.31). A
                                 CLIPImageProcessor preprocessor_config.json in the current form
                                 (as its save_pretrained writes it): {"shortest_edge": 36},
                                 crop {"height": 32, "width": 32}.
tests/golden/clip/
  <checkpoint>.<image>[.own].safetensors
        vision.attn.L [H, T, T] for every vision layer,
        text.I.attn.L [H_t, T_I, T_I] for label I and every text layer (causal: zero above the
                      diagonal),
        image_embeds [P] and text_embeds [labels, P]: the projections before L2 normalisation
                      (get_image_features / get_text_features; CLIPOutput's are normalised),
        logits_per_image [labels] (logit_scale.exp() * cosine similarity, before softmax),
        probs [labels] (softmax of those)
  cases.json    the manifest the C++ tests walk: {"tolerance", "cases": [{"name", "checkpoint",
                "image", "own_resolution", "label_ids", "label_texts" (where the ids came from
                text), "vision_layers", "vision_heads", "vision_tokens", "grid": [w, h],
                "text_layers", "text_heads", "projection_dim", "weights", "note"}]}

The reference is `ClipReference` below, written from transformers' modeling_clip.py
(CLIPVisionEmbeddings with interpolate_pos_encoding, CLIPTextEmbeddings, CLIPAttention,
CLIPMLP, CLIPEncoderLayer, CLIPTextTransformer's pooling, CLIPModel's projections and
logits), on the weights as the file stores them upcast to float32 as from_pretrained does.
Pictures follow CLIPImageProcessor's slow path in Pillow step by step (convert to RGB, resize
by the shortest edge with get_resize_output_image_size(default_to_square=False), bicubic in
PIL, centre crop, rescale by 1/255, normalise with OPENAI_CLIP_MEAN/STD), the same steps as
BitImageProcessor's, so make_vision_checkpoints.py's preprocess is reused after the legacy
int sizes are turned into dicts as get_size_dict does. At their own resolution (headscope's
--own-resolution; transformers' interpolate_pos_encoding=True) the pictures are cut at the
right and bottom to whole patches and the patch positions resized by bicubic interpolation
(align_corners=False, no antialiasing) to the new grid, [CLS]'s kept.

Each label runs on its own, unpadded. A padded batch (CLIPProcessor(padding=True)) gives the
same numbers for every row up to the pooled one, which is all the pooled output, the
embeddings and the logits depend on: the causal mask keeps any row from seeing a later
position, so padding after the eos changes nothing before it (only the pad rows' own maps).

Pooling: with eos_token_id 2 in the config (the legacy openai configs) the row at the argmax
of the ids (where 49407 sits, the largest id of CLIP's vocabulary); otherwise the first row
whose id is eos_token_id. (Current transformers tests `max(ids) == 49407` instead of the
config's 2; both rules pick the same rows for every label here, which is checked.)

Nothing here calls Headscope.
"""

import math
import os
import shutil
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)
from make_vision_checkpoints import bit_processor, preprocess  # noqa: E402  (BitImageProcessor = CLIPImageProcessor's steps)
from make_vit_checkpoints import ROOT, from_stored, write_folder, write_json  # noqa: E402

GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "clip")
IMAGES = ["tests/images/rgb.png", "tests/images/rgba.png"]   # 64x48 RGB, 37x29 RGBA

OPENAI_CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
OPENAI_CLIP_STD = [0.26862954, 0.26130258, 0.27577711]
TRAINED_LOGIT_SCALE = 4.6052    # ln(100): the value every released CLIP stores

# openai/clip-vit-base-patch32's tokenizer on three prompts ([SOS] ... [EOS]).
TINY_LABELS = [
    ("a photo of a cat", [49406, 320, 1125, 539, 320, 2368, 49407]),
    ("a photo of a dog", [49406, 320, 1125, 539, 320, 1929, 49407]),
    ("a diagram", [49406, 320, 22697, 49407]),
]
# Ids of the shrunk 512-token vocabulary: bos 510, eos 511; lengths 3, 5 and 8, and one with
# an eos in the middle (pooled there, at the first eos, not at the last token).
BF16_LABEL_IDS = [
    [510, 17, 511],
    [510, 42, 301, 7, 511],
    [510, 5, 99, 250, 13, 480, 64, 511],
    [510, 120, 511, 33, 77, 511],
]


# --------------------------------------------------------------------------------------
# preprocessing: CLIPImageProcessor (slow path)


def clip_processor(config):
    """The preprocessor_config.json as CLIPImageProcessor holds it: legacy int sizes as
    get_size_dict makes them ("size" with default_to_square=False -> shortest edge,
    "crop_size" -> square), and its defaults for the fields a legacy file leaves out."""
    size, crop = config.get("size", 224), config.get("crop_size", 224)
    out = dict(config)
    out["size"] = {"shortest_edge": size} if isinstance(size, int) else size
    out["crop_size"] = {"height": crop, "width": crop} if isinstance(crop, int) else crop
    out.setdefault("resample", 3)
    out.setdefault("rescale_factor", 1 / 255)
    out.setdefault("image_mean", OPENAI_CLIP_MEAN)
    out.setdefault("image_std", OPENAI_CLIP_STD)
    for flag in ("do_resize", "do_center_crop", "do_rescale", "do_normalize", "do_convert_rgb"):
        assert out.get(flag, True), flag        # every step on, as preprocess() assumes
    assert "shortest_edge" in out["size"]
    return out


# --------------------------------------------------------------------------------------
# the reference CLIP, its modules named as transformers' CLIPModel names its tensors

ACTIVATIONS = {
    "quick_gelu": lambda x: x * torch.sigmoid(1.702 * x),
    "gelu": lambda x: F.gelu(x),
}


class ClipEncoderLayer(nn.Module):
    """CLIPEncoderLayer: x += out_proj(attn(layer_norm1(x))); x += fc2(act(fc1(layer_norm2(x))))."""

    def __init__(self, c):
        super().__init__()
        e, i = c["hidden_size"], c["intermediate_size"]
        self.heads, self.act = c["num_attention_heads"], ACTIVATIONS[c["hidden_act"]]
        self.self_attn = nn.Module()
        for name in ("k_proj", "v_proj", "q_proj", "out_proj"):
            setattr(self.self_attn, name, nn.Linear(e, e))
        self.layer_norm1 = nn.LayerNorm(e, eps=c["layer_norm_eps"])
        self.mlp = nn.Module()
        self.mlp.fc1, self.mlp.fc2 = nn.Linear(e, i), nn.Linear(i, e)
        self.layer_norm2 = nn.LayerNorm(e, eps=c["layer_norm_eps"])

    def forward(self, x, causal):
        a = self.self_attn
        y = self.layer_norm1(x)
        b, t, e = y.shape
        split = lambda z: z.view(b, t, self.heads, e // self.heads).transpose(1, 2)   # [1, H, T, Dh]
        q, k, v = split(a.q_proj(y)), split(a.k_proj(y)), split(a.v_proj(y))
        scores = q @ k.transpose(-1, -2) * (e // self.heads) ** -0.5
        if causal:
            future = torch.ones(t, t, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        weights = torch.softmax(scores, dim=-1)                                        # [1, H, T, T]
        x = x + a.out_proj((weights @ v).transpose(1, 2).reshape(b, t, e))
        x = x + self.mlp.fc2(self.act(self.mlp.fc1(self.layer_norm2(x))))
        return x, weights


class ClipReference(nn.Module):
    """CLIP (Radford et al. 2021) at inference, as modeling_clip.py computes it.

    Vision: patches by a stride-P convolution without bias, the class embedding prepended,
    learned positions added (resized bicubically to the grid at the picture's own size),
    pre_layrnorm, pre-LN encoder layers, post_layernorm on the [CLS] row, visual_projection
    (no bias). Text: token + position embeddings (positions 0..T-1), the same layers under a
    causal mask, final_layer_norm on every row, the pooled row (see pooled_index),
    text_projection (no bias). logits_per_image = logit_scale.exp() * cos(image, text)."""

    def __init__(self, config):
        super().__init__()
        self.c = config
        tc, vc = config["text_config"], config["vision_config"]
        self.tc, self.vc = tc, vc
        p = config["projection_dim"]

        self.text_model = nn.Module()
        self.text_model.embeddings = nn.Module()
        self.text_model.embeddings.token_embedding = nn.Embedding(tc["vocab_size"], tc["hidden_size"])
        self.text_model.embeddings.position_embedding = nn.Embedding(tc["max_position_embeddings"], tc["hidden_size"])
        self.text_model.encoder = nn.Module()
        self.text_model.encoder.layers = nn.ModuleList(ClipEncoderLayer(tc) for _ in range(tc["num_hidden_layers"]))
        self.text_model.final_layer_norm = nn.LayerNorm(tc["hidden_size"], eps=tc["layer_norm_eps"])

        e, patch = vc["hidden_size"], vc["patch_size"]
        self.vision_model = nn.Module()
        self.vision_model.embeddings = nn.Module()
        self.vision_model.embeddings.class_embedding = nn.Parameter(torch.zeros(e))
        self.vision_model.embeddings.patch_embedding = nn.Conv2d(vc.get("num_channels", 3), e, patch, stride=patch,
                                                                 bias=False)
        self.vision_model.embeddings.position_embedding = nn.Embedding((vc["image_size"] // patch) ** 2 + 1, e)
        self.vision_model.pre_layrnorm = nn.LayerNorm(e, eps=vc["layer_norm_eps"])
        self.vision_model.encoder = nn.Module()
        self.vision_model.encoder.layers = nn.ModuleList(ClipEncoderLayer(vc) for _ in range(vc["num_hidden_layers"]))
        self.vision_model.post_layernorm = nn.LayerNorm(e, eps=vc["layer_norm_eps"])

        self.visual_projection = nn.Linear(e, p, bias=False)
        self.text_projection = nn.Linear(tc["hidden_size"], p, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(config["logit_scale_init_value"]))

    def hf_names(self):
        """{transformers name: parameter}: the module tree is named as CLIPModel's."""
        return dict(self.named_parameters())

    def buffers_stored(self):
        """The position_ids buffers checkpoints written before transformers 4.31 carry."""
        t = self.tc["max_position_embeddings"]
        n = self.vision_model.embeddings.position_embedding.num_embeddings
        return {"text_model.embeddings.position_ids": torch.arange(t, dtype=torch.int64).unsqueeze(0),
                "vision_model.embeddings.position_ids": torch.arange(n, dtype=torch.int64).unsqueeze(0)}

    def vision_positions(self, height, width):
        """CLIPVisionEmbeddings: the stored positions for the configured square grid,
        otherwise interpolate_pos_encoding's bicubic resize of the patch positions."""
        emb = self.vision_model.embeddings
        table = emb.position_embedding.weight.unsqueeze(0)                    # [1, 1 + N, E]
        p = self.vc["patch_size"]
        new_h, new_w = height // p, width // p
        side = int((table.shape[1] - 1) ** 0.5)
        if new_h == side and new_w == side:
            return table
        dim = table.shape[-1]
        grid = table[:, 1:].reshape(1, side, side, dim).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, size=(new_h, new_w), mode="bicubic", align_corners=False)
        return torch.cat([table[:, :1], grid.permute(0, 2, 3, 1).reshape(1, new_h * new_w, dim)], dim=1)

    def encode_image(self, pixels):
        """pixels [1, 3, H, W] -> (attention maps [1, H, T, T] per layer, image_embeds [1, P])."""
        vm = self.vision_model
        x = vm.embeddings.patch_embedding(pixels).flatten(2).transpose(1, 2)  # [1, N, E]
        x = torch.cat([vm.embeddings.class_embedding.expand(1, 1, -1), x], dim=1)
        x = x + self.vision_positions(pixels.shape[2], pixels.shape[3])
        x = vm.pre_layrnorm(x)
        attentions = []
        for layer in vm.encoder.layers:
            x, w = layer(x, causal=False)
            attentions.append(w)
        pooled = vm.post_layernorm(x[:, 0])
        return attentions, self.visual_projection(pooled)

    def pooled_index(self, ids):
        """CLIPTextTransformer's pooled row: legacy configs (eos_token_id 2) the argmax of
        the ids, otherwise the first eos; checked against current transformers' test
        (max id == 49407 -> argmax)."""
        ids = torch.tensor(ids)
        eos = self.tc["eos_token_id"]
        first_eos = int((ids == eos).int().argmax()) if (ids == eos).any() else None
        index = int(ids.argmax()) if eos == 2 else first_eos
        current = int(ids.argmax()) if int(ids.max()) == 49407 else first_eos
        assert index is not None and index == current, (ids, index, current)
        return index

    def encode_text(self, ids):
        """ids (one label, unpadded) -> (attention maps [1, H, T, T] per layer, text_embeds [1, P])."""
        tm = self.text_model
        t = len(ids)
        assert t <= self.tc["max_position_embeddings"]
        x = tm.embeddings.token_embedding(torch.tensor([ids])) + tm.embeddings.position_embedding(torch.arange(t))
        attentions = []
        for layer in tm.encoder.layers:
            x, w = layer(x, causal=True)
            attentions.append(w)
        x = tm.final_layer_norm(x)
        return attentions, self.text_projection(x[:, self.pooled_index(ids)])

    def forward(self, pixels, labels):
        vision, image_embeds = self.encode_image(pixels)
        texts = [self.encode_text(ids) for ids in labels]
        text_embeds = torch.cat([e for _, e in texts], dim=0)                 # [labels, P]
        unit = lambda z: z / z.pow(2).sum(-1, keepdim=True).pow(0.5)          # _get_vector_norm
        logits_per_image = (unit(image_embeds) @ unit(text_embeds).t()) * self.logit_scale.exp()
        return vision, [a for a, _ in texts], image_embeds[0], text_embeds, logits_per_image[0]


def randomise(module, seed):
    """Every parameter from N(0, s) with a seeded generator: LayerNorm weights near 1,
    biases 0.1, embeddings (tokens, positions, the class embedding) 0.5, projections
    1.5 / sqrt(fan in) so the heads attend unevenly; logit_scale the trained 4.6052."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            if name == "logit_scale":
                p.fill_(TRAINED_LOGIT_SCALE)
                continue
            noise = torch.randn(p.shape, generator=g)
            if p.dim() == 1 and "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * noise)
            elif "embedding" in name and "patch" not in name:
                p.copy_(0.5 * noise)
            elif p.dim() == 1:
                p.copy_(0.1 * noise)
            else:
                p.copy_(1.5 / math.sqrt(p[0].numel()) * noise)


def load_reference(reference, stored):
    """The stored tensors (upcast to float32) into the reference; the position_ids buffers
    transformers ignores are checked and left out."""
    names = reference.hf_names()
    state = from_stored({k: v for k, v in stored.items() if not k.endswith("position_ids")})
    for k, v in reference.buffers_stored().items():
        if k in stored:
            assert torch.equal(stored[k], v), k
    assert set(state) == set(names), set(state) ^ set(names)
    with torch.no_grad():
        for k, p in names.items():
            p.copy_(state[k].reshape(p.shape))


def cast_floats(tensors, dtype):
    """make_vit_checkpoints.cast for the float tensors; int64 buffers stay int64."""
    return {k: (v.detach().to(dtype) if v.is_floating_point() else v.detach()).contiguous()
            for k, v in tensors.items()}


# --------------------------------------------------------------------------------------
# configs


def openai_b32_config(text, vision, projection):
    """openai/clip-vit-base-patch32's config.json (every field of the hub file), sizes
    from `text` / `vision` / `projection`."""
    def tower(model_type, **fields):
        common = {
            "_name_or_path": "", "add_cross_attention": False, "architectures": None, "attention_dropout": 0.0,
            "bad_words_ids": None, "chunk_size_feed_forward": 0, "cross_attention_hidden_size": None,
            "decoder_start_token_id": None, "diversity_penalty": 0.0, "do_sample": False, "dropout": 0.0,
            "early_stopping": False, "encoder_no_repeat_ngram_size": 0, "finetuning_task": None,
            "forced_bos_token_id": None, "forced_eos_token_id": None, "hidden_act": "quick_gelu",
            "id2label": {"0": "LABEL_0", "1": "LABEL_1"}, "initializer_factor": 1.0, "initializer_range": 0.02,
            "is_decoder": False, "is_encoder_decoder": False, "label2id": {"LABEL_0": 0, "LABEL_1": 1},
            "layer_norm_eps": 1e-05, "length_penalty": 1.0, "max_length": 20, "min_length": 0,
            "model_type": model_type, "no_repeat_ngram_size": 0, "num_beam_groups": 1, "num_beams": 1,
            "num_return_sequences": 1, "output_attentions": False, "output_hidden_states": False,
            "output_scores": False, "prefix": None, "projection_dim": projection, "problem_type": None,
            "pruned_heads": {}, "remove_invalid_values": False, "repetition_penalty": 1.0, "return_dict": True,
            "return_dict_in_generate": False, "sep_token_id": None, "task_specific_params": None,
            "temperature": 1.0, "tie_encoder_decoder": False, "tie_word_embeddings": True,
            "tokenizer_class": None, "top_k": 50, "top_p": 1.0, "torch_dtype": None, "torchscript": False,
            "transformers_version": "4.16.0.dev0", "use_bfloat16": False,
        }
        common.update(fields)
        return dict(sorted(common.items()))

    return {
        "_name_or_path": "openai/clip-vit-base-patch32",
        "architectures": ["CLIPModel"],
        "initializer_factor": 1.0,
        "logit_scale_init_value": 2.6592,
        "model_type": "clip",
        "projection_dim": projection,
        "text_config": tower("clip_text_model", bos_token_id=0, eos_token_id=2, pad_token_id=1, **text),
        "text_config_dict": None,
        "transformers_version": None,
        "vision_config": tower("clip_vision_model", bos_token_id=None, eos_token_id=None, pad_token_id=None,
                               **vision),
        "vision_config_dict": None,
    }


def laion_b32_config(text, vision, projection, dtype):
    """laion/CLIP-ViT-B-32-laion2B-s34B-b79K as transformers 4.37.2 saves it: the fields
    that differ from CLIPConfig / CLIPTextConfig / CLIPVisionConfig's defaults. The real save
    (strollingorange/roomLuxuryAnnotater) has no bos/eos ids in text_config, i.e. they were
    the defaults 49406/49407 once loaded; here they are shrunk, so written."""
    return {
        "_name_or_path": "laion/CLIP-ViT-B-32-laion2B-s34B-b79K",
        "architectures": ["CLIPModel"],
        "initializer_factor": 1.0,
        "logit_scale_init_value": 2.6592,
        "model_type": "clip",
        "projection_dim": projection,
        "text_config": dict(sorted(dict(dropout=0.0, hidden_act="gelu", model_type="clip_text_model",
                                        projection_dim=projection, **text).items())),
        "torch_dtype": dtype,
        "transformers_version": "4.37.2",
        "vision_config": dict(sorted(dict(dropout=0.0, hidden_act="gelu", model_type="clip_vision_model",
                                          projection_dim=projection, **vision).items())),
    }


def with_defaults(config):
    """The config as CLIPConfig holds it once loaded: each tower's missing fields from
    CLIPTextConfig / CLIPVisionConfig's defaults (those the reference reads)."""
    text_defaults = {"layer_norm_eps": 1e-05, "hidden_act": "quick_gelu", "max_position_embeddings": 77,
                     "vocab_size": 49408, "eos_token_id": 49407}
    vision_defaults = {"layer_norm_eps": 1e-05, "hidden_act": "quick_gelu", "num_channels": 3}
    out = dict(config)
    out["text_config"] = dict(text_defaults, **config["text_config"])
    out["vision_config"] = dict(vision_defaults, **config["vision_config"])
    return out


def openai_feature_extractor(size, crop):
    """openai/clip-vit-base-patch32's preprocessor_config.json (the legacy
    CLIPFeatureExtractor form), shrunk."""
    return {
        "crop_size": crop,
        "do_center_crop": True,
        "do_normalize": True,
        "do_resize": True,
        "feature_extractor_type": "CLIPFeatureExtractor",
        "image_mean": OPENAI_CLIP_MEAN,
        "image_std": OPENAI_CLIP_STD,
        "resample": 3,
        "size": size,
    }


def clip_image_processor(shortest_edge, crop):
    """A preprocessor_config.json as CLIPImageProcessor.save_pretrained writes it."""
    return bit_processor(shortest_edge, crop, "CLIPImageProcessor", OPENAI_CLIP_MEAN, OPENAI_CLIP_STD)


# --------------------------------------------------------------------------------------
# goldens

CASES = []


def check_maps(maps, causal):
    for a in maps:
        assert torch.isfinite(a).all() and torch.allclose(a.sum(-1), torch.ones(()), atol=1e-5)
        if causal:
            assert float(a[0].triu(1).abs().max()) == 0.0


def record(checkpoint, processor, model, labels, texts, stored_dtype, note, image, own_resolution=False):
    pixels = preprocess(image, clip_processor(processor), model.vc["patch_size"] if own_resolution else None)
    with torch.no_grad():
        vision, text_maps, image_embeds, text_embeds, logits = model(pixels, labels)
    check_maps(vision, causal=False)
    for maps in text_maps:
        check_maps(maps, causal=True)
    tensors = {f"vision.attn.{l}": a[0].contiguous() for l, a in enumerate(vision)}
    for i, maps in enumerate(text_maps):
        tensors.update({f"text.{i}.attn.{l}": a[0].contiguous() for l, a in enumerate(maps)})
    probs = torch.softmax(logits, dim=-1)
    tensors.update({"image_embeds": image_embeds.contiguous(), "text_embeds": text_embeds.contiguous(),
                    "logits_per_image": logits.contiguous(), "probs": probs.contiguous()})
    name = f"{checkpoint}.{os.path.splitext(os.path.basename(image))[0]}{'.own' if own_resolution else ''}"
    save_safetensors(os.path.join(GOLDEN_DIR, name + ".safetensors"), tensors)
    p = model.vc["patch_size"]
    case = {"name": name, "checkpoint": checkpoint, "image": image, "own_resolution": own_resolution,
            "label_ids": labels, "vision_layers": len(vision), "vision_heads": vision[0].shape[1],
            "vision_tokens": vision[0].shape[-1], "grid": [pixels.shape[3] // p, pixels.shape[2] // p],
            "text_layers": len(text_maps[0]), "text_heads": text_maps[0][0].shape[1],
            "projection_dim": image_embeds.shape[0], "weights": stored_dtype, "note": note}
    if texts:
        case["label_texts"] = texts
    CASES.append(case)
    peak = max(float(a.max()) for a in vision)
    print(f"  {name}: T = {vision[0].shape[-1]}, grid {case['grid'][0]} x {case['grid'][1]}, largest vision weight "
          f"{peak:.3f}, logits {[round(float(v), 4) for v in logits]}, probs {[round(float(v), 4) for v in probs]}")


def main():
    torch.set_num_threads(1)
    shutil.rmtree(GOLDEN_DIR, ignore_errors=True)
    os.makedirs(GOLDEN_DIR)

    # openai/clip-vit-base-patch32's layout: CLIPModel, F16, one file, the position_ids
    # buffers, the full vocabulary, legacy pooling and the legacy feature extractor config.
    cfg = openai_b32_config(
        text=dict(hidden_size=8, intermediate_size=16, num_attention_heads=2, num_hidden_layers=2,
                  max_position_embeddings=77, vocab_size=49408),
        vision=dict(hidden_size=16, intermediate_size=32, num_attention_heads=2, num_hidden_layers=2,
                    image_size=28, patch_size=7),
        projection=8)
    proc = openai_feature_extractor(32, 28)
    ref = ClipReference(with_defaults(cfg)).eval()
    randomise(ref, seed=21)
    tensors = cast_floats(dict({k: v for k, v in ref.hf_names().items()}, **ref.buffers_stored()), torch.float16)
    write_folder("clip_tiny", cfg, proc, tensors)
    load_reference(ref, tensors)
    labels, texts = [ids for _, ids in TINY_LABELS], [text for text, _ in TINY_LABELS]
    print("clip_tiny (CLIPModel, quick_gelu, F16, legacy configs)")
    for image in IMAGES:
        record("clip_tiny", proc, ref, labels, texts, "F16", "reference on the F16 weights upcast", image)
    record("clip_tiny", proc, ref, labels, texts, "F16",
           "reference on the F16 weights upcast, own resolution (positions resized bicubically)", IMAGES[0],
           own_resolution=True)

    # laion's B/32 as a current transformers saves it: gelu, BF16 in two shards, first-eos
    # pooling on a shrunk vocabulary, the current CLIPImageProcessor config.
    cfg = laion_b32_config(
        text=dict(hidden_size=12, intermediate_size=48, num_attention_heads=3, num_hidden_layers=2,
                  max_position_embeddings=16, vocab_size=512, bos_token_id=510, eos_token_id=511),
        vision=dict(hidden_size=24, intermediate_size=96, num_attention_heads=3, num_hidden_layers=3,
                    image_size=32, patch_size=8),
        projection=16, dtype="bfloat16")
    proc = clip_image_processor(36, 32)
    ref = ClipReference(with_defaults(cfg)).eval()
    randomise(ref, seed=22)
    tensors = cast_floats(ref.hf_names(), torch.bfloat16)
    first = {k for k in tensors if k.startswith("text_model.") or k.startswith("vision_model.embeddings.")
             or k.startswith("vision_model.pre_layrnorm.") or k.startswith("vision_model.encoder.layers.0.")}
    write_folder("clip_tiny_gelu_bf16", cfg, proc, tensors, shards=[first, set(tensors) - first])
    load_reference(ref, tensors)
    print("clip_tiny_gelu_bf16 (CLIPModel, gelu, BF16 in two shards, first-eos pooling)")
    record("clip_tiny_gelu_bf16", proc, ref, BF16_LABEL_IDS, None, "BF16",
           "reference on the BF16 weights upcast; label 3 has an eos in the middle (pooled at the first)",
           IMAGES[0])

    write_json(os.path.join(GOLDEN_DIR, "cases.json"), {"tolerance": 1e-4, "cases": CASES})
    print(f"wrote {len(CASES)} golden cases")


if __name__ == "__main__":
    main()
