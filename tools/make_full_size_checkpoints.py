#!/usr/bin/python3
"""Writes full-size, randomly initialised checkpoints in Hugging Face's folder layout,
for timing and memory measurements (they are too big to commit: ~500 MB and ~350 MB):

    /usr/bin/python3 tools/make_full_size_checkpoints.py [OUT_DIR]   (default /tmp/headscope-full)

OUT_DIR/
  gpt2-small/     GPT-2 small's shape and names as openai-community/gpt2 stores them
                  (GPT2LMHeadModel, F32, no prefix, LM head tied to wte): E=768 H=12 L=12,
                  V=50257, 1024 positions, 124.4M parameters
  vit-base-16/    google/vit-base-patch16-224's shape (ViTForImageClassification, F32,
                  "vit." prefix, 1000 labels, 224 px, P=16): 86.6M parameters

Weights are N(0, 0.02) (LayerNorms 1 and 0, biases 0), seeded, as the models'
initializers draw them; the numbers are meaningless, the format and size are real.
"""

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)


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


def vit_base_16(folder):
    E, H, L, I, S, P, C = 768, 12, 12, 3072, 224, 16, 1000
    g = torch.Generator().manual_seed(86)
    t = {"vit.embeddings.cls_token": normal(g, 1, 1, E),
         "vit.embeddings.position_embeddings": normal(g, 1, (S // P) ** 2 + 1, E),
         "vit.embeddings.patch_embeddings.projection.weight": normal(g, E, 3, P, P),
         "vit.embeddings.patch_embeddings.projection.bias": torch.zeros(E)}
    for l in range(L):
        p = f"vit.encoder.layer.{l}."
        t[p + "layernorm_before.weight"], t[p + "layernorm_before.bias"] = torch.ones(E), torch.zeros(E)
        for name in ("attention.attention.query", "attention.attention.key", "attention.attention.value",
                     "attention.output.dense"):
            t[p + name + ".weight"], t[p + name + ".bias"] = normal(g, E, E), torch.zeros(E)
        t[p + "layernorm_after.weight"], t[p + "layernorm_after.bias"] = torch.ones(E), torch.zeros(E)
        t[p + "intermediate.dense.weight"], t[p + "intermediate.dense.bias"] = normal(g, I, E), torch.zeros(I)
        t[p + "output.dense.weight"], t[p + "output.dense.bias"] = normal(g, E, I), torch.zeros(E)
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


def main():
    parser = argparse.ArgumentParser(description="Full-size random-weight checkpoints for benchmarks.")
    parser.add_argument("out", nargs="?", default="/tmp/headscope-full", help="folder to write them into")
    out = parser.parse_args().out
    gpt2_small(os.path.join(out, "gpt2-small"))
    vit_base_16(os.path.join(out, "vit-base-16"))


if __name__ == "__main__":
    main()
