#!/usr/bin/python3
"""Writes full-size, randomly initialised checkpoints in Hugging Face's folder layout,
for timing and memory measurements (too big to commit: 0.3 to 2.5 GB each, 4.2 GB in all):

    /usr/bin/python3 tools/make_full_size_checkpoints.py [OUT_DIR] [--only NAME,...] [--big] [--quick]

OUT_DIR defaults to /tmp/headscope-full. --only writes just the named folders; --big adds
qwen2.5-7b (15 GB on disk: never written without it); --quick writes the three decoder
shapes shrunk (same config fields, names, layout and BF16; 2 layers, widths of a few dozen)
for tools/bench_vs_torch.py --quick, default OUT_DIR /tmp/headscope-bench/quick-models.

OUT_DIR/
  gpt2-small/     GPT-2 small's shape and names as openai-community/gpt2 stores them
                  (GPT2LMHeadModel, F32, no prefix, LM head tied to wte): E=768 H=12 L=12,
                  V=50257, 1024 positions, 124.4M parameters
  vit-base-16/    google/vit-base-patch16-224's shape (ViTForImageClassification, F32,
                  "vit." prefix, 1000 labels, 224 px, P=16): 86.6M parameters
  clip-b16/       openai/clip-vit-base-patch16's shape (CLIPModel, F32, no prefix): image tower
                  E=768 L=12 H=12 P=16 at 224 px, text tower E=512 L=12 H=8 V=49408: 149.6M parameters
  siglip-b16/     google/siglip-base-patch16-224's shape (SiglipModel, F32, no prefix): image
                  tower E=768 L=12 H=12 P=16 at 224 px (196 patches, no [CLS]) with its
                  attention-pooling head, text tower E=768 L=12 H=12 V=32000, 64 positions:
                  203.2M parameters
  dinov2-reg-base/ facebook/dinov2-with-registers-base's shape (Dinov2WithRegistersModel, F32, no
                  prefix, positions learned at 518 px, P=14, 4 registers, BitImageProcessor
                  256 / crop 224): 86.6M parameters
  smollm2-135m/   HuggingFaceTB/SmolLM2-135M (llama): E=576 L=30 H=9 KV=3 I=1536 V=49152, tied,
                  rope_theta 1e5; one model.safetensors, BF16, 134.5M parameters (269 MB)
  qwen2.5-0.5b/   Qwen/Qwen2.5-0.5B (qwen2): E=896 L=24 H=14 KV=2 I=4864 V=151936, tied, q/k/v
                  biases, rope_theta 1e6; one model.safetensors, BF16, 494.0M parameters (988 MB)
  llama-3.2-1b/   meta-llama/Llama-3.2-1B (llama): E=2048 L=16 H=32 KV=8 Dh=64 I=8192 V=128256,
                  tied, rope_scaling llama3 (factor 32, low 1, high 4, original 8192), rope_theta
                  5e5; one model.safetensors, BF16, 1235.8M parameters (2.47 GB)
  qwen2.5-7b/     (--big only) Qwen/Qwen2.5-7B (qwen2): E=3584 L=28 H=28 KV=4 I=18944 V=152064,
                  untied lm_head, q/k/v biases; BF16 in 4 shards + model.safetensors.index.json,
                  split as transformers' save_pretrained(max_shard_size="4GB") splits it:
                  7615.6M parameters (15.2 GB)

Weights are N(0, 0.02) (LayerNorms / RMSNorms 1, LayerNorm and projection biases 0), seeded,
as the models' initializers draw them; the numbers are meaningless, the format and size are
real. Each decoder's config.json has every field of the named checkpoint's config.json, with
its values. The decoders are written tensor by tensor in row chunks (tools/safetensors_stream.py),
so memory stays near 100 MB whatever the size; each tensor's values depend only on the model's
seed and the tensor's name.
"""

import argparse
import json
import math
import os
import shutil
import sys
import time
import zlib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)
from safetensors_stream import nbytes, write_streamed  # noqa: E402  (the same format, streamed)

DEFAULT_OUT = "/tmp/headscope-full"
DEFAULT_QUICK_OUT = "/tmp/headscope-bench/quick-models"


def normal(generator, *shape):
    return (torch.randn(*shape, generator=generator) * 0.02).contiguous()


def write_folder(folder, config, tensors, processor=None):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    if processor is not None:
        with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
            json.dump(processor, f, indent=2, sort_keys=True)
    save_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})
    n = sum(t.numel() for t in tensors.values())
    print(f"{folder}: {len(tensors)} tensors, {n / 1e6:.1f}M parameters")


def gpt2_small(folder):
    E, H, L, V, N = 768, 12, 12, 50257, 1024
    g = torch.Generator().manual_seed(124)
    t = {"wte.weight": normal(g, V, E), "wpe.weight": normal(g, N, E)}
    for l in range(L):
        p = f"h.{l}."
        t[p + "ln_1.weight"], t[p + "ln_1.bias"] = torch.ones(E), torch.zeros(E)
        t[p + "attn.c_attn.weight"], t[p + "attn.c_attn.bias"] = normal(g, E, 3 * E), torch.zeros(3 * E)
        t[p + "attn.c_proj.weight"], t[p + "attn.c_proj.bias"] = normal(g, E, E), torch.zeros(E)
        t[p + "ln_2.weight"], t[p + "ln_2.bias"] = torch.ones(E), torch.zeros(E)
        t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"] = normal(g, E, 4 * E), torch.zeros(4 * E)
        t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"] = normal(g, 4 * E, E), torch.zeros(E)
    t["ln_f.weight"], t["ln_f.bias"] = torch.ones(E), torch.zeros(E)
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": V, "n_positions": N,
              "n_ctx": N, "n_embd": E, "n_layer": L, "n_head": H, "activation_function": "gelu_new",
              "layer_norm_epsilon": 1e-5, "bos_token_id": 50256, "eos_token_id": 50256}
    write_folder(folder, config, t)


def patch_inputs(g, prefix, E, S, P):
    """[CLS], the position embeddings of (S / P)^2 patches + [CLS] and the patch convolution."""
    return {prefix + "embeddings.cls_token": normal(g, 1, 1, E),
            prefix + "embeddings.position_embeddings": normal(g, 1, (S // P) ** 2 + 1, E),
            prefix + "embeddings.patch_embeddings.projection.weight": normal(g, E, 3, P, P),
            prefix + "embeddings.patch_embeddings.projection.bias": torch.zeros(E)}


def encoder_layer(t, g, p, E, I, norms, mlp, layer_scale=False):
    """One pre-LN layer's tensors under `p`: `norms` (before, after attention), q/k/v/out,
    `mlp` (up, down), and DINOv2's LayerScale factors."""
    t[p + norms[0] + ".weight"], t[p + norms[0] + ".bias"] = torch.ones(E), torch.zeros(E)
    for name in ("attention.attention.query", "attention.attention.key", "attention.attention.value",
                 "attention.output.dense"):
        t[p + name + ".weight"], t[p + name + ".bias"] = normal(g, E, E), torch.zeros(E)
    if layer_scale:
        t[p + "layer_scale1.lambda1"] = torch.ones(E)
    t[p + norms[1] + ".weight"], t[p + norms[1] + ".bias"] = torch.ones(E), torch.zeros(E)
    t[p + mlp[0] + ".weight"], t[p + mlp[0] + ".bias"] = normal(g, I, E), torch.zeros(I)
    t[p + mlp[1] + ".weight"], t[p + mlp[1] + ".bias"] = normal(g, E, I), torch.zeros(E)
    if layer_scale:
        t[p + "layer_scale2.lambda1"] = torch.ones(E)


def vit_base_16(folder):
    E, H, L, I, S, P, C = 768, 12, 12, 3072, 224, 16, 1000
    g = torch.Generator().manual_seed(86)
    t = patch_inputs(g, "vit.", E, S, P)
    for l in range(L):
        encoder_layer(t, g, f"vit.encoder.layer.{l}.", E, I, ("layernorm_before", "layernorm_after"),
                      ("intermediate.dense", "output.dense"))
    t["vit.layernorm.weight"], t["vit.layernorm.bias"] = torch.ones(E), torch.zeros(E)
    t["classifier.weight"], t["classifier.bias"] = normal(g, C, E), torch.zeros(C)
    config = {"model_type": "vit", "architectures": ["ViTForImageClassification"], "hidden_size": E,
              "num_hidden_layers": L, "num_attention_heads": H, "intermediate_size": I, "hidden_act": "gelu",
              "layer_norm_eps": 1e-12, "image_size": S, "patch_size": P, "num_channels": 3, "qkv_bias": True,
              "id2label": {str(i): f"class {i}" for i in range(C)}, "label2id": {f"class {i}": i for i in range(C)}}
    processor = {"image_processor_type": "ViTImageProcessor", "do_resize": True, "size": {"height": S, "width": S},
                 "resample": 2, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
                 "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    write_folder(folder, config, t, processor)


def dinov2_reg_base(folder):
    """facebook/dinov2-with-registers-base's shape: positions learned at 518 px (37 x 37),
    4 registers, LayerScale; Dinov2WithRegistersModel (no head, no prefix), F32."""
    from make_vision_checkpoints import bit_processor, registers_config

    E, H, L, I, S, P, R = 768, 12, 12, 3072, 518, 14, 4
    g = torch.Generator().manual_seed(87)
    t = patch_inputs(g, "", E, S, P)
    t["embeddings.mask_token"] = torch.zeros(1, E)
    t["embeddings.register_tokens"] = normal(g, 1, R, E)
    for l in range(L):
        encoder_layer(t, g, f"encoder.layer.{l}.", E, I, ("norm1", "norm2"), ("mlp.fc1", "mlp.fc2"), layer_scale=True)
    t["layernorm.weight"], t["layernorm.bias"] = torch.ones(E), torch.zeros(E)
    write_folder(folder, registers_config("Dinov2WithRegistersModel", E, H, L, S, P, R), t, bit_processor(256, 224))


def clip_b16(folder):
    """openai/clip-vit-base-patch16's shape: image tower E=768 H=12 L=12 P=16 at 224 px, text
    tower E=512 H=8 L=12 V=49408, projection 512; CLIPModel, F32, the legacy feature
    extractor config (shortest edge 224, crop 224). Random weights from the reference's
    own initialisation (make_clip_checkpoints.randomise)."""
    from make_clip_checkpoints import (ClipReference, openai_b32_config, openai_feature_extractor, randomise,
                                       with_defaults)

    cfg = openai_b32_config(
        text=dict(hidden_size=512, intermediate_size=2048, num_attention_heads=8, num_hidden_layers=12,
                  max_position_embeddings=77, vocab_size=49408),
        vision=dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12, num_hidden_layers=12,
                    image_size=224, patch_size=16),
        projection=512)
    ref = ClipReference(with_defaults(cfg)).eval()
    randomise(ref, seed=88)
    tensors = {k: v.detach().contiguous() for k, v in ref.hf_names().items()}
    write_folder(folder, cfg, tensors, openai_feature_extractor(224, 224))


def siglip_b16(folder):
    """google/siglip-base-patch16-224's shape: SiglipConfig's defaults (both towers E=768 H=12
    L=12 I=3072, P=16 at 224 px, V=32000, 64 positions); SiglipModel, F32, its image processor.
    Random weights from the reference's own initialisation (make_siglip_checkpoints)."""
    from make_siglip_checkpoints import (SiglipReference, randomise_siglip, siglip_config, siglip_image_processor,
                                         with_defaults)

    cfg = siglip_config(text=dict(vocab_size=32000), vision=dict(image_size=224, patch_size=16), dtype="float32")
    ref = SiglipReference(with_defaults(cfg)).eval()
    randomise_siglip(ref, 89, 4.7, -16.5)
    tensors = {k: v.detach().contiguous() for k, v in ref.hf_names().items()}
    write_folder(folder, cfg, tensors, siglip_image_processor(224))


# --------------------------------------------------------------------------------------
# decoders: config.json of the named hub checkpoint, weights streamed in BF16


def smollm2_135m_config():
    """HuggingFaceTB/SmolLM2-135M config.json."""
    return {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
            "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576,
            "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "is_llama_config": True,
            "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 9,
            "num_hidden_layers": 30, "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
            "rope_interleaved": False, "rope_scaling": None, "rope_theta": 100000, "tie_word_embeddings": True,
            "torch_dtype": "bfloat16", "transformers_version": "4.40.1", "use_cache": True, "vocab_size": 49152}


def qwen25_config(**fields):
    """Qwen/Qwen2.5-0.5B config.json; Qwen2.5-7B's has the same fields."""
    cfg = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
           "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
           "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
           "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
           "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": True,
           "torch_dtype": "bfloat16", "transformers_version": "4.40.1", "use_cache": True, "use_mrope": False,
           "use_sliding_window": False, "vocab_size": 151936}
    cfg.update(fields)
    return cfg


def qwen25_7b_config():
    """Qwen/Qwen2.5-7B config.json."""
    return qwen25_config(hidden_size=3584, intermediate_size=18944, max_position_embeddings=131072,
                         max_window_layers=28, num_attention_heads=28, num_hidden_layers=28, num_key_value_heads=4,
                         sliding_window=131072, tie_word_embeddings=False, vocab_size=152064)


def llama32_1b_config():
    """meta-llama/Llama-3.2-1B config.json."""
    return {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
            "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
            "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
            "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama", "num_attention_heads": 32,
            "num_hidden_layers": 16, "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
            "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"},
            "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
            "transformers_version": "4.45.0.dev0", "use_cache": True, "vocab_size": 128256}


# name: (config, seed, max shard bytes or None for one model.safetensors, quick-mode changes).
# The quick shapes keep each model's head ratio, biases, tying, RoPE fields and
# max_position_embeddings; special ids move inside the small vocabulary.
DECODERS = {
    "smollm2-135m": (smollm2_135m_config, 135, None,
                     {"hidden_size": 72, "num_hidden_layers": 2, "intermediate_size": 192, "vocab_size": 512}),
    "qwen2.5-0.5b": (qwen25_config, 494, None,
                     {"hidden_size": 112, "num_hidden_layers": 2, "max_window_layers": 2, "intermediate_size": 224,
                      "vocab_size": 640, "bos_token_id": 600, "eos_token_id": 600}),
    "llama-3.2-1b": (llama32_1b_config, 1236, None,
                     {"hidden_size": 128, "head_dim": 16, "num_attention_heads": 8, "num_key_value_heads": 2,
                      "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 768, "bos_token_id": 700,
                      "eos_token_id": 701}),
    "qwen2.5-7b": (qwen25_7b_config, 7616, 4 * 10 ** 9, None),
}
BIG = {"qwen2.5-7b"}
CHUNK_ELEMENTS = 1 << 23   # 8M values (32 MB in float32) generated at a time


def decoder_tensors(cfg):
    """[(hub name, shape, init)] in the order transformers' state_dict lists them (module
    registration order: what save_pretrained's sharding walks). init: normal / ones / zeros."""
    e, h, kv, layers = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
                        cfg["num_hidden_layers"])
    d, inter, v = cfg.get("head_dim") or e // h, cfg["intermediate_size"], cfg["vocab_size"]
    qkv_bias = cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)
    out = [("model.embed_tokens.weight", (v, e), "normal")]
    for i in range(layers):
        a, p = f"model.layers.{i}.self_attn.", f"model.layers.{i}."
        for name, rows in (("q_proj", h * d), ("k_proj", kv * d), ("v_proj", kv * d)):
            out.append((a + name + ".weight", (rows, e), "normal"))
            if qkv_bias:
                out.append((a + name + ".bias", (rows,), "zeros"))
        out.append((a + "o_proj.weight", (e, h * d), "normal"))
        if cfg.get("attention_bias", False):
            out.append((a + "o_proj.bias", (e,), "zeros"))
        out += [(p + "mlp.gate_proj.weight", (inter, e), "normal"), (p + "mlp.up_proj.weight", (inter, e), "normal"),
                (p + "mlp.down_proj.weight", (e, inter), "normal"),
                (p + "input_layernorm.weight", (e,), "ones"), (p + "post_attention_layernorm.weight", (e,), "ones")]
    out.append(("model.norm.weight", (e,), "ones"))
    if not cfg["tie_word_embeddings"]:
        out.append(("lm_head.weight", (v, e), "normal"))
    return out


def bf16_chunks(name, shape, init, seed):
    """A function yielding the tensor's rows in BF16 chunks: N(0, 0.02) from a generator
    seeded by the model's seed and the tensor's name, or ones / zeros."""
    def chunks():
        if init != "normal":
            yield (torch.ones if init == "ones" else torch.zeros)(shape, dtype=torch.bfloat16)
            return
        g = torch.Generator().manual_seed(seed * 2 ** 32 + zlib.crc32(name.encode()))
        per_row = math.prod(shape[1:])
        step = max(1, CHUNK_ELEMENTS // per_row)
        for row in range(0, shape[0], step):
            n = min(step, shape[0] - row)
            yield (torch.randn(n, *shape[1:], generator=g) * 0.02).to(torch.bfloat16)
    return chunks


def shard_plan(tensors, max_bytes):
    """save_pretrained's split (huggingface_hub split_state_dict_into_shards_factory): walk
    the state dict in order, start a new shard when the next tensor would pass max_bytes."""
    shards, size = [[]], 0
    for name, shape, _ in tensors:
        b = nbytes("BF16", shape)
        if shards[-1] and size + b > max_bytes:
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += b
    return shards


def write_decoder(folder, cfg, seed, max_shard_bytes=None):
    started = time.monotonic()
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    tensors = decoder_tensors(cfg)
    entries = {name: (name, "BF16", shape, bf16_chunks(name, shape, init, seed)) for name, shape, init in tensors}
    total = 0
    if max_shard_bytes is None:
        total = write_streamed(os.path.join(folder, "model.safetensors"), list(entries.values()), {"format": "pt"})
    else:
        plan = shard_plan(tensors, max_shard_bytes)
        weight_map = {}
        for i, names in enumerate(plan):
            file = f"model-{i + 1:05d}-of-{len(plan):05d}.safetensors"
            total += write_streamed(os.path.join(folder, file), [entries[n] for n in names], {"format": "pt"})
            weight_map.update({n: file for n in names})
            print(f"  {file}: {len(names)} tensors", flush=True)
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f,
                      indent=2)
            f.write("\n")
    n = sum(math.prod(shape) for _, shape, _ in tensors)
    print(f"{folder}: {len(tensors)} tensors, {n / 1e6:.1f}M parameters, {total / 1e9:.2f} GB BF16, "
          f"{time.monotonic() - started:.0f} s", flush=True)


def decoder(name, quick=False):
    make_config, seed, max_shard_bytes, quick_changes = DECODERS[name]
    cfg = make_config()
    if quick:
        cfg.update(quick_changes)
    return cfg, seed, max_shard_bytes


# --------------------------------------------------------------------------------------

WRITERS = {"gpt2-small": gpt2_small, "vit-base-16": vit_base_16, "dinov2-reg-base": dinov2_reg_base,
           "clip-b16": clip_b16, "siglip-b16": siglip_b16}
QUICK = [n for n in DECODERS if n not in BIG]


def main():
    parser = argparse.ArgumentParser(description="Full-size random-weight checkpoints for benchmarks.")
    parser.add_argument("out", nargs="?", help=f"folder to write them into (default {DEFAULT_OUT}; "
                                               f"with --quick {DEFAULT_QUICK_OUT})")
    parser.add_argument("--only", help="comma-separated: " + ", ".join([*WRITERS, *DECODERS]))
    parser.add_argument("--big", action="store_true", help="also write qwen2.5-7b (15 GB on disk)")
    parser.add_argument("--quick", action="store_true", help="the decoder shapes shrunk, for bench_vs_torch.py --quick")
    args = parser.parse_args()
    out = args.out or (DEFAULT_QUICK_OUT if args.quick else DEFAULT_OUT)
    known = QUICK if args.quick else [*WRITERS, *DECODERS]
    names = args.only.split(",") if args.only else [n for n in known if n not in BIG or args.big]
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"--only: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    if not args.big and any(n in BIG for n in names):
        parser.error(f"{', '.join(n for n in names if n in BIG)}: 15 GB on disk; pass --big to write it")
    for name in names:
        if name in WRITERS:
            WRITERS[name](os.path.join(out, name))
        else:
            cfg, seed, max_shard_bytes = decoder(name, args.quick)
            write_decoder(os.path.join(out, name), cfg, seed, max_shard_bytes)


if __name__ == "__main__":
    main()
