#!/usr/bin/python3
"""Times PyTorch (Debian's python3-torch, CPU) and `headscope-cli bench` side by side on
the same workloads and prints a Markdown report: machine, date, versions, and a table of
medians and ratios (Headscope time / PyTorch time) against each workload's target.

Run with Debian's PyTorch, NumPy and Pillow (python3-torch python3-numpy python3-pil):

    /usr/bin/python3 tools/bench_vs_torch.py [--only mha-64,gpt2-128] [--rounds 5]
        [--repeat K] [--threads 2] [--cli build/release/bin/headscope-cli]
        [--models-dir /tmp/headscope-full] [--out docs/benchmarks.md] [--json FILE]
        [--openblas-dir /usr/lib/x86_64-linux-gnu/openblas-openmp] [--quick]

Workloads: one self-attention layer at three sizes (mha-*), ViT-B/16 at 224 px
(vit-b16), DINOv2-B/14 with registers at a 224 px crop (dinov2-reg-b14), GPT-2 small at
128 and 1024 tokens (gpt2-*), and three decoders at 1,024
token ids (smollm2-1024, qwen-0.5b-1024, llama-1b-1024: SmolLM2-135M, Qwen2.5-0.5B and
Llama-3.2-1B shapes), every head's map kept; llama-1b-4096 runs Headscope alone and states
what PyTorch would need (weights, every map, the largest transient), computed, not run.
The models are the full-size random-weight checkpoints that tools/make_full_size_checkpoints.py
writes (run here for those --models-dir lacks); PyTorch runs the same weights in the
repository's own reference modules (make_vit_checkpoints.Reference,
make_vision_checkpoints.Dinov2Reference, make_gpt2_checkpoints.Gpt2, make_decoder_checkpoints.forward), which return every head's attention probabilities as
transformers' eager attention does with output_attentions=True. The decoders' BF16 weights
are upcast to float32 as from_pretrained(torch_dtype=torch.float32) does.

Each PyTorch measurement runs in a fresh process (this script with --torch-worker), because
OpenBLAS reads OPENBLAS_NUM_THREADS only when torch is first imported. That process runs
without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (these machines set them; they pin OpenBLAS
to its AVX2 kernel: docs/performance.md, "Measuring on these machines"), and a calibration pass tries two BLAS
libraries, OpenBLAS (OpenMP build, by LD_LIBRARY_PATH=--openblas-dir, when it is installed)
and the libblas.so.3 torch loads by default, times (torch threads, OpenBLAS threads) in
{1, 2} x {1, 2} (2 / 2 alone for the decoders, whose forwards are GEMM-bound and take
seconds), with a few forwards, and keeps the fastest per workload; then --rounds rounds
alternate PyTorch and Headscope (which goes first swaps every round), each giving one median
of --repeat forwards. The tables report the median over rounds per side, and each side's
peak RSS (PyTorch: the worker's getrusage ru_maxrss; Headscope: what `bench` prints).
Progress goes to stderr, the report to stdout (and to --out; records as JSON to --json).

--quick validates the script end to end in about a minute: the decoder workloads only,
on the decoder shapes shrunk (make_full_size_checkpoints.py --quick, written to
/tmp/headscope-bench/quick-models), 64 token ids (256 for llama-1b-4096), one round, and
each PyTorch worker first checks that its eager attention gives the reference's maps and
logits (make_decoder_checkpoints.attention, self-checks included).
"""

import argparse
import datetime
import errno
import json
import os
import random
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(TOOLS, ".."))
DEFAULT_CLI = os.path.join("build", "release", "bin", "headscope-cli")
DEFAULT_MODELS = "/tmp/headscope-full"
DEFAULT_QUICK_MODELS = "/tmp/headscope-bench/quick-models"
BLAS_ALTERNATIVE = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
DEFAULT_OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
THREADS = [(1, 1), (2, 1), (1, 2), (2, 2)]   # (torch.set_num_threads, OPENBLAS_NUM_THREADS)
# PyTorch's side runs without these (they pin OpenBLAS to its AVX2 kernel); never unset elsewhere.
UNSET_FOR_TORCH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
TOKEN_SEED = 20240611
VOCAB = 50257

# target: (Headscope ms, PyTorch ms) as the goal was stated, or (1, 1) for the house's goal alone
# (every map sooner than PyTorch); the ratio to meet is their quotient.
WORKLOADS = [
    {"name": "mha-64", "kind": "mha", "T": 64, "E": 128, "H": 8, "target": (0.07, 0.28), "repeat": 200},
    {"name": "mha-256", "kind": "mha", "T": 256, "E": 512, "H": 8, "target": (5, 5.5), "repeat": 20},
    {"name": "mha-1024", "kind": "mha", "T": 1024, "E": 768, "H": 12, "target": (50, 83), "repeat": 5},
    {"name": "vit-b16", "kind": "vit", "model": "vit-base-16", "target": (200, 270), "repeat": 5},
    # No goal was stated for DINOv2 beyond the house's: every map sooner than PyTorch.
    {"name": "dinov2-reg-b14", "kind": "vit", "family": "dinov2", "model": "dinov2-reg-base", "target": (1, 1),
     "repeat": 5},
    # CLIP: the image tower's maps and three labels through the text tower, scored.
    {"name": "clip-b16", "kind": "vit", "family": "clip", "model": "clip-b16", "target": (1, 1), "repeat": 5,
     "labels": [[49406, 320, 1125, 539, 320, 2368, 49407], [49406, 320, 1125, 539, 320, 1929, 49407],
                [49406, 320, 22697, 49407]]},
    # SigLIP: no [CLS], the attention-pooling probe, three labels through the bidirectional text tower.
    {"name": "siglip-b16", "kind": "vit", "family": "siglip", "model": "siglip-b16", "target": (1, 1), "repeat": 5,
     "labels": [[260, 638, 3293, 870, 1], [6254, 267, 260, 1443, 1], [262, 266, 476, 8532, 270, 4460, 3949, 1682, 1]]},
    {"name": "gpt2-128", "kind": "gpt2", "model": "gpt2-small", "T": 128, "target": (220, 300), "repeat": 5},
    {"name": "gpt2-1024", "kind": "gpt2", "model": "gpt2-small", "T": 1024, "target": (1800, 2670), "repeat": 3},
    {"name": "gpt2-1024-od", "kind": "gpt2", "model": "gpt2-small", "T": 1024, "repeat": 3,
     "extra": ["--on-demand"]},
    # decoders: no target yet; "threads" limits the calibration, "quick_T" is the --quick length
    {"name": "smollm2-1024", "kind": "decoder", "model": "smollm2-135m", "T": 1024, "quick_T": 64, "repeat": 3,
     "rounds": 3, "calib_repeat": 1, "threads": [(2, 2)]},
    {"name": "qwen-0.5b-1024", "kind": "decoder", "model": "qwen2.5-0.5b", "T": 1024, "quick_T": 64, "repeat": 3,
     "rounds": 3, "calib_repeat": 1, "threads": [(2, 2)]},
    {"name": "llama-1b-1024", "kind": "decoder", "model": "llama-3.2-1b", "T": 1024, "quick_T": 64, "repeat": 2,
     "rounds": 3, "calib_repeat": 1, "threads": [(2, 2)]},
    # Maps on demand (bench --on-demand): no map kept, each reduced to its metrics and
    # thumbnail as it is made, the last row's logits; then single heads computed again.
    {"name": "llama-1b-1024-od", "kind": "decoder", "model": "llama-3.2-1b", "T": 1024, "quick_T": 64, "repeat": 2,
     "rounds": 3, "calib_repeat": 1, "threads": [(2, 2)], "extra": ["--on-demand"]},
    {"name": "llama-1b-4096", "kind": "decoder", "model": "llama-3.2-1b", "T": 4096, "quick_T": 256, "repeat": 1,
     "rounds": 1, "torch": False, "extra": ["--on-demand"]},
    # 15 GB of BF16 weights: PyTorch's F32 eager copy (30 GB) cannot run on these machines.
    {"name": "qwen-7b-512", "kind": "decoder", "model": "qwen2.5-7b", "T": 512, "quick_T": 64, "repeat": 1,
     "rounds": 1, "torch": False},
]
PRETTY = {"smollm2-135m": "SmolLM2-135M", "qwen2.5-0.5b": "Qwen2.5-0.5B", "llama-3.2-1b": "Llama-3.2-1B",
          "qwen2.5-7b": "Qwen2.5-7B"}
BIG_MODELS = {"qwen2.5-7b"}   # make_full_size_checkpoints.py writes them only with --big


def log(message):
    print(message, file=sys.stderr, flush=True)


def describe(w):
    if w["kind"] == "mha":
        return f"1 self-attention layer, T={w['T']} E={w['E']} H={w['H']}"
    if w["kind"] == "vit" and w.get("family") == "clip":
        return ("CLIP ViT-B/16 at 224 px (197 tokens, 144 maps) + 3 labels through the text tower "
                "(7, 7, 4 tokens, 96 maps each), logits_per_image")
    if w["kind"] == "vit" and w.get("family") == "siglip":
        return ("SigLIP B/16 at 224 px (196 patches, 144 maps, the pooling probe) + 3 labels through the text tower "
                "(5, 5, 9 tokens, 144 maps each), logits_per_image")
    if w["kind"] == "vit" and w.get("family") == "dinov2":
        return "DINOv2-B/14 with 4 registers, 224 px crop (261 tokens, positions resized from 37 x 37), 144 maps"
    if w["kind"] == "vit":
        return "ViT-B/16, 224 px (197 tokens), 144 maps + classifier"
    if w["kind"] == "decoder":
        c = w["config"]
        shrunk = " (--quick: shrunk)" if w.get("quick") else ""
        if "--on-demand" in w.get("extra", ()):
            return (f"{PRETTY[w['model']]}{shrunk}, {w['T']} tokens, {c['num_hidden_layers']} x "
                    f"{c['num_attention_heads']} maps on demand (Headscope: each reduced to metrics + thumbnail, "
                    f"none kept; last row's logits; PyTorch: every map kept)")
        return (f"{PRETTY[w['model']]}{shrunk}, {w['T']} tokens, {c['num_hidden_layers']} x "
                f"{c['num_attention_heads']} maps + LM-head logits [T, {c['vocab_size']}]")
    if "--on-demand" in w.get("extra", ()):
        return (f"GPT-2 small, {w['T']} tokens, 144 maps on demand (Headscope: each reduced to metrics + "
                f"thumbnail, none kept; last row's logits; PyTorch: every map kept)")
    return f"GPT-2 small, {w['T']} tokens, 144 maps + LM-head logits"


def token_ids(t, vocab=VOCAB):
    """The same seeded ids for both sides."""
    rng = random.Random(TOKEN_SEED + t)
    return [rng.randrange(vocab) for _ in range(t)]


# --------------------------------------------------------------------------------------
# the PyTorch side (runs in a child process: --torch-worker SPEC)


def torch_job(spec):
    """Returns (run, maps, T) and, for the decoders, the --quick check's largest difference:
    `run()` is one forward from pixel values / token ids to the last output, returning
    everything it computed (so nothing is skipped)."""
    import torch

    sys.path.insert(0, TOOLS)
    if spec["kind"] == "mha":
        torch.manual_seed(0)
        mha = torch.nn.MultiheadAttention(spec["E"], spec["H"], batch_first=True).eval()
        x = torch.randn(1, spec["T"], spec["E"])
        # need_weights=True keeps PyTorch off its fused fast path, as it must to return the maps.
        return (lambda: mha(x, x, x, need_weights=True, average_attn_weights=False)), spec["H"], spec["T"]
    if spec["kind"] == "decoder":
        return decoder_job(spec)
    from demo_reference import load_safetensors   # the repository's F32 safetensors reader
    folder = spec["model_dir"]
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    stored, _ = load_safetensors(os.path.join(folder, "model.safetensors"))
    if spec["kind"] == "vit" and spec.get("family") == "clip":
        import make_clip_checkpoints as clip
        import make_vision_checkpoints as vision
        model = clip.ClipReference(clip.with_defaults(config)).eval()
        clip.load_reference(model, stored)
        with open(os.path.join(folder, "preprocessor_config.json")) as f:
            processor = clip.clip_processor(json.load(f))
        pixels = vision.preprocess(spec["image"], processor)   # not timed, as for ViT
        side = pixels.shape[2] // config["vision_config"]["patch_size"]
        vc = config["vision_config"]
        maps = vc["num_hidden_layers"] * vc["num_attention_heads"]
        return (lambda: model(pixels, spec["labels"])), maps, side * side + 1
    if spec["kind"] == "vit" and spec.get("family") == "siglip":
        import make_siglip_checkpoints as siglip
        siglip.CHECKS = False   # the forward alone, not the reference's checks of itself
        model = siglip.SiglipReference(siglip.with_defaults(config)).eval()
        siglip.load_reference(model, stored)
        with open(os.path.join(folder, "preprocessor_config.json")) as f:
            pixels = siglip.preprocess(spec["image"], json.load(f))   # not timed, as for ViT
        vc = siglip.with_defaults(config)["vision_config"]   # the hub's short config leaves the sizes to defaults
        side = pixels.shape[2] // vc["patch_size"]
        return (lambda: model(pixels, spec["labels"])), vc["num_hidden_layers"] * vc["num_attention_heads"], side * side
    if spec["kind"] == "vit" and spec.get("family") == "dinov2":
        import make_vision_checkpoints as vision
        model = vision.Dinov2Reference(config, classifier=False).eval()
        vision.load_reference(model, "", stored)
        with open(os.path.join(folder, "preprocessor_config.json")) as f:
            processor = json.load(f)
        pixels = vision.preprocess(spec["image"], processor)   # not timed, as for ViT
        side = pixels.shape[2] // config["patch_size"]
        maps = config["num_hidden_layers"] * config["num_attention_heads"]
        return (lambda: model(pixels)), maps, side * side + 1 + config["num_register_tokens"]
    if spec["kind"] == "vit":
        from make_vit_checkpoints import Reference, load_reference, preprocess
        model = Reference(config, "classifier").eval()
        load_reference(model, "vit.", stored)
        with open(os.path.join(folder, "preprocessor_config.json")) as f:
            processor = json.load(f)
        pixels = preprocess(spec["image"], processor)   # not timed: Headscope decodes outside its timer too
        side = pixels.shape[2] // config["patch_size"]
        maps = config["num_hidden_layers"] * config["num_attention_heads"]
        return (lambda: model(pixels)), maps, side * side + 1   # + [CLS]
    from make_gpt2_checkpoints import Gpt2
    model = Gpt2(config["vocab_size"], config["n_embd"], config["n_head"], config["n_layer"], config["n_positions"],
                 config["layer_norm_epsilon"]).eval()
    model.load_state_dict({k: v.float() for k, v in stored.items()})   # GPT2LMHeadModel names, no prefix
    ids = torch.tensor(spec["ids"], dtype=torch.int64)
    return (lambda: model(ids)), config["n_layer"] * config["n_head"], len(spec["ids"])


_MASKS = {}


def eager_attention(spec, layer, lp, x, t):
    """make_decoder_checkpoints.attention as transformers computes it, without the reference's
    self-checks: it also rotates by complex numbers in float64, recomputes every head's scores
    one by one, checks the window against a band and keeps the raw scores (a second set of
    [H, T, T] maps), which would bill PyTorch for work transformers does not do. This is
    LlamaAttention / Qwen2Attention + eager_attention_forward: nn.Linear projections, q/k
    norm, RoPE (the reference's apply_rope and tables), repeat_kv, q k^T * scaling, soft cap,
    + the additive mask (0 / finfo.min, made once per forward and window, as create_causal_mask
    makes it), softmax in float32, weights @ v, o_proj. --quick checks it against the reference."""
    import torch
    import torch.nn.functional as F
    import make_decoder_checkpoints as ref

    h, kv, d = spec["heads"], spec["kv_heads"], spec["head_dim"]
    q = F.linear(x, lp["wq"], lp.get("bq"))
    k = F.linear(x, lp["wk"], lp.get("bk"))
    v = F.linear(x, lp["wv"], lp.get("bv"))
    q, k, v = (z.view(t, -1, d).transpose(0, 1) for z in (q, k, v))          # [heads, T, D]
    if spec["qk_norm"]:
        q = ref.rms_norm(q, lp["q_norm"], spec["eps"], spec["qk_norm"] == "gemma")
        k = ref.rms_norm(k, lp["k_norm"], spec["eps"], spec["qk_norm"] == "gemma")
    inv_freq, scaling = spec["rope"][layer]
    q, k = ref.apply_rope(q, inv_freq, scaling), ref.apply_rope(k, inv_freq, scaling)
    groups = h // kv
    k = k[:, None].expand(kv, groups, t, d).reshape(h, t, d)                 # repeat_kv
    v = v[:, None].expand(kv, groups, t, d).reshape(h, t, d)
    weights = torch.matmul(q, k.transpose(1, 2)) * spec["scaling"]
    cap = spec["attn_softcap"]
    if cap is not None:
        weights = torch.tanh(weights / cap) * cap
    window = spec["windows"][layer]
    if (t, window) not in _MASKS:
        allowed = ref.allowed_mask(t, window)
        _MASKS[(t, window)] = torch.zeros(t, t).masked_fill(~allowed, torch.finfo(torch.float32).min)
    weights = torch.softmax(weights + _MASKS[(t, window)], dim=-1, dtype=torch.float32)
    context = torch.matmul(weights, v).transpose(0, 1).reshape(t, h * d)
    return F.linear(context, lp["wo"], lp.get("bo")), weights, None


def decoder_job(spec):
    """The reference decoder (make_decoder_checkpoints.forward) on the checkpoint's weights
    upcast to float32, with eager_attention in place of the reference's attention."""
    import torch
    import make_decoder_checkpoints as ref
    from safetensors_stream import load_float32

    cfg = spec["config"]
    t = len(spec["ids"])
    arch = ref.case_spec(cfg, t)
    params = ref.from_hub(arch, load_float32(spec["model_dir"]))   # float32 already: from_stored keeps them
    ids = spec["ids"]
    check = None
    if spec.get("check"):
        with torch.inference_mode():
            want_maps, want_logits, _ = ref.forward(arch, params, ids)      # the reference's own attention
            ref.attention = eager_attention
            got_maps, got_logits, _ = ref.forward(arch, params, ids)
        check = max([float((a - b).abs().max()) for a, b in zip(got_maps, want_maps)]
                    + [float((got_logits - want_logits).abs().max() / want_logits.abs().max())])
        if check > 1e-5:
            sys.exit(f"{spec['name']}: eager attention differs from the reference by {check:g}")
        del want_maps, want_logits, got_maps, got_logits
    ref.attention = eager_attention   # forward() looks attention up in its module at each call

    def run():
        _MASKS.clear()   # each forward makes its masks, as transformers' does
        return ref.forward(arch, params, ids)
    return run, arch["layers"] * arch["heads"], t, check


def loaded_blas():
    """The BLAS library this process mapped (what torch's matmul calls)."""
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "/" in line})
    libs = [p for p in paths if re.search(r"blas", os.path.basename(p))]
    openblas = [p for p in libs if "openblas" in os.path.basename(p)]
    return os.path.realpath((openblas or libs or ["none found"])[0])


def torch_worker(spec):
    """Prints one JSON line: median and minimum of spec['repeat'] forwards after a warm-up,
    the BLAS library loaded, and the process's peak RSS."""
    import torch

    torch.set_num_threads(spec["torch_threads"])
    baseline_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux
    job = torch_job(spec)
    run, maps, t = job[:3]
    check = job[3] if len(job) > 3 else None
    times = []
    with torch.inference_mode():
        out = run()   # warm-up: first allocations, OpenBLAS thread start
        del out
        for _ in range(spec["repeat"]):
            start = time.perf_counter()
            out = run()
            times.append((time.perf_counter() - start) * 1e3)
            del out   # freed outside the timer, as Headscope's maps are between its runs
    print(json.dumps({"forward_ms_median": statistics.median(times), "forward_ms_min": min(times), "maps": maps,
                      "T": t, "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
                      "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "blas": loaded_blas(),
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "baseline_rss_mb": baseline_mb, "check_max_diff": check}))


def torch_env(setting, openblas_dir):
    blas, torch_threads, blas_threads = setting
    # OpenBLAS sizes its pool from the environment when torch loads it; OMP_NUM_THREADS only
    # matches torch's own pool to the set_num_threads the worker calls anyway.
    env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_TORCH}
    env.update(OPENBLAS_NUM_THREADS=str(blas_threads), OMP_NUM_THREADS=str(torch_threads))
    if blas == "openblas":
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (openblas_dir, os.environ.get("LD_LIBRARY_PATH")) if p)
    return env


def run_torch(spec, setting, repeat, args):
    job = dict(spec, torch_threads=setting[1], repeat=repeat)
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", json.dumps(job)]
    done = subprocess.run(cmd, env=torch_env(setting, args.openblas_dir), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"PyTorch worker failed ({spec['name']}, setting {setting}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------
# the Headscope side


def cli_args(spec):
    if spec["kind"] == "mha":
        return ["--mha", "--T", str(spec["T"]), "--E", str(spec["E"]), "--H", str(spec["H"])]
    if spec["kind"] == "vit" and "labels" in spec:
        return ["--model", spec["model_dir"], "--image", spec["image"], "--label-tokens",
                ";".join(",".join(map(str, ids)) for ids in spec["labels"])]
    if spec["kind"] == "vit":
        return ["--model", spec["model_dir"], "--image", spec["image"]]
    return ["--model", spec["model_dir"], "--tokens", ",".join(map(str, spec["ids"]))]


def run_headscope(spec, args, repeat, extra=(), allow_fail=False):
    """`bench`'s JSON line; with allow_fail, a failed run (Headscope refuses up front an input
    whose maps would not fit in memory) gives {"failed": its message} instead of ending the run."""
    cmd = [args.cli, "bench", *cli_args(spec), "--repeat", str(repeat), "--threads", str(args.threads), *extra]
    for attempt in range(4):
        try:
            done = subprocess.run(cmd, capture_output=True, text=True)
            break
        except OSError as e:
            # The binary may be mid-relink (missing, or "text file busy"): wait, then retry.
            if attempt == 3 or e.errno not in (errno.ENOENT, errno.ETXTBSY, errno.ENOEXEC):
                raise
            log(f"  {args.cli}: {e.strerror}; retrying in 30 s")
            time.sleep(30)
    if done.returncode != 0 and allow_fail:
        message = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        return {"failed": f"exit status {done.returncode}: {message}"}
    if done.returncode != 0:
        sys.exit(f"headscope-cli failed ({spec['name']}): {shlex.join(cmd[:8])} ...\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------
# inputs


def has_weights(folder):
    return os.path.exists(os.path.join(folder, "config.json")) and any(
        os.path.exists(os.path.join(folder, f)) for f in ("model.safetensors", "model.safetensors.index.json"))


def ensure_models(args, chosen):
    """Writes the checkpoints the chosen workloads need and --models-dir lacks."""
    missing = sorted({w["model"] for w in chosen if "model" in w
                      and not has_weights(os.path.join(args.models_dir, w["model"]))})
    if not missing:
        return
    log(f"writing {', '.join(missing)} to {args.models_dir} (tools/make_full_size_checkpoints.py)")
    cmd = [sys.executable, os.path.join(TOOLS, "make_full_size_checkpoints.py"), args.models_dir,
           "--only", ",".join(missing), *(["--quick"] if args.quick else []),
           *(["--big"] if BIG_MODELS & set(missing) and not args.quick else [])]
    subprocess.run(cmd, check=True, stdout=sys.stderr)


def ensure_image(work_dir):
    """A deterministic 224x224 RGB PNG: smooth gradients plus seeded noise, so patches differ."""
    import numpy as np
    from PIL import Image

    path = os.path.join(work_dir, "bench_224.png")
    if not os.path.exists(path):
        os.makedirs(work_dir, exist_ok=True)
        rng = np.random.default_rng(224)
        y, x = np.mgrid[0:224, 0:224].astype(np.float64)
        base = np.stack([x / 223 * 255, y / 223 * 255, (x + y) / 446 * 255], axis=-1)
        pixels = np.clip(base + rng.normal(0, 30, base.shape), 0, 255).astype(np.uint8)
        Image.fromarray(pixels, "RGB").save(path)
    return path


def make_spec(w, args):
    spec = dict(w)
    if "model" in w:
        spec["model_dir"] = os.path.join(args.models_dir, w["model"])
    if w["kind"] == "vit":
        spec["image"] = ensure_image(args.work_dir)
    if w["kind"] == "gpt2":
        spec["ids"] = token_ids(w["T"])
    if w["kind"] == "decoder":
        from safetensors_stream import count_parameters

        with open(os.path.join(spec["model_dir"], "config.json")) as f:
            spec["config"] = json.load(f)
        if args.quick:
            spec.update(T=w["quick_T"], quick=True, check=True)
        spec["ids"] = token_ids(spec["T"], spec["config"]["vocab_size"])
        spec["n_params"] = count_parameters(spec["model_dir"])
    return spec


def torch_memory(cfg, t, n_params):
    """Bytes PyTorch's eager forward holds at its peak with every map kept (float32): the
    weights, every layer's [H, T, T] map, and the largest transient on top of them. That is
    the larger of (a) in a layer's attention, a second score-sized [H, T, T] tensor (q k^T
    while it is scaled, masked and soft-maxed into the kept map), the additive mask [T, T],
    q, k, v, k and v repeated per query head and the context; (b) the MLP's gate, up and
    product [T, I]; (c) the LM head's logits [T, V] (made after every map exists); plus a
    few [T, E] hidden states. Not counted: the Python / torch runtime (the worker reports
    its RSS before loading, `baseline_rss_mb`), OpenBLAS's per-thread GEMM buffers and
    allocator slack (together 2 to 15% over the estimate at the shapes tried)."""
    e, h, layers = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    kv = cfg.get("num_key_value_heads") or h
    d = cfg.get("head_dim") or e // h
    f32 = 4
    attention = f32 * (h * t * t + t * t + t * (h * d + 2 * kv * d + 2 * h * d + h * d))
    mlp = f32 * 3 * t * cfg["intermediate_size"]
    logits = f32 * t * cfg["vocab_size"]
    parts = {"weights": f32 * n_params, "maps": f32 * layers * h * t * t,
             "transient": max(attention, mlp, logits) + f32 * 4 * t * e}
    parts["total"] = sum(parts.values())
    return parts


# --------------------------------------------------------------------------------------
# measuring


def blas_choices(args):
    """The BLAS libraries PyTorch's side tries: OpenBLAS (OpenMP build) when installed, and
    whatever libblas.so.3 torch loads by default."""
    if os.path.exists(os.path.join(args.openblas_dir, "libblas.so.3")):
        return ["openblas", "system"]
    return ["system"]


def setting_name(setting):
    blas = "OpenBLAS (LD_LIBRARY_PATH)" if setting[0] == "openblas" else "default libblas.so.3"
    return f"{blas}, {setting[1]} / {setting[2]}"


def rounds_of(spec, args):
    return args.rounds or (1 if args.quick else spec.get("rounds", 5))


def repeat_of(spec, args):
    return args.repeat or (2 if args.quick else spec["repeat"])


def calibrate(spec, repeat, args):
    """The fastest (BLAS, torch threads, OpenBLAS threads) for this workload, and every median."""
    medians = {}
    threads = [tuple(x) for x in spec.get("threads", THREADS)]
    for setting in [(b, t, o) for b in args.blas for t, o in threads]:
        r = run_torch(spec, setting, repeat, args)
        medians[setting] = r["forward_ms_median"]
        log(f"  calibration {spec['name']} {setting_name(setting)} ({os.path.basename(r['blas'])}): "
            f"{r['forward_ms_median']:.3f} ms")
    return min(medians, key=medians.get), medians


def measure(spec, args):
    repeat, rounds = repeat_of(spec, args), rounds_of(spec, args)
    calib_repeat = min(args.calib_repeat or spec.get("calib_repeat", 2), repeat)
    log(f"{spec['name']}: calibrating PyTorch ({calib_repeat} forwards per setting)")
    best, calibration = calibrate(spec, calib_repeat, args)
    torch_ms, head_ms, rss, torch_rss, torch_info, head_info = [], [], [], [], None, None
    for r in range(rounds):
        # Alternate who goes first, so neither side always meets the other's leftover heat/cache.
        order = ("torch", "headscope") if r % 2 == 0 else ("headscope", "torch")
        for side in order:
            if side == "torch":
                torch_info = run_torch(spec, best, repeat, args)
                torch_ms.append(torch_info["forward_ms_median"])
                torch_rss.append(torch_info["peak_rss_mb"])
            else:
                head_info = run_headscope(spec, args, repeat, spec.get("extra", ()))
                head_ms.append(head_info["forward_ms_median"])
                rss.append(head_info["peak_rss_mb"])
        log(f"  round {r + 1}/{rounds}: PyTorch {torch_ms[-1]:.3f} ms, Headscope {head_ms[-1]:.3f} ms")
    if torch_info["maps"] != head_info["maps"] or torch_info["T"] != head_info["T"]:
        log(f"  warning: {spec['name']}: PyTorch computed {torch_info['maps']} maps at T={torch_info['T']}, "
            f"Headscope {head_info['maps']} at T={head_info['T']}")
    t, h = statistics.median(torch_ms), statistics.median(head_ms)
    result = {"spec": spec, "setting": best, "calibration": calibration, "torch_ms": t, "head_ms": h,
              "torch_rounds": torch_ms, "head_rounds": head_ms, "ratio": h / t, "rss": max(rss),
              "torch_rss": max(torch_rss), "torch_baseline_rss": torch_info["baseline_rss_mb"],
              "blas": torch_info["blas"], "check": torch_info.get("check_max_diff"), "repeat": repeat,
              "rounds": rounds, "calib_repeat": calib_repeat, "torch_version": torch_info["torch"],
              "maps": head_info["maps"], "T": head_info["T"], "head_map_ms": head_info.get("head_map_ms_median"),
              "head_map_ms_max": head_info.get("head_map_ms_max")}
    if "target" in spec:
        target = spec["target"][0] / spec["target"][1]
        result.update(target=target, passed=h / t <= target)
    if spec["kind"] == "decoder":
        result["torch_estimate"] = torch_memory(spec["config"], spec["T"], spec["n_params"])
    return result


def measure_headscope_only(spec, args):
    """Headscope alone (PyTorch would not fit): rounds of `bench`, and what PyTorch would need."""
    repeat, rounds = repeat_of(spec, args), rounds_of(spec, args)
    estimate = torch_memory(spec["config"], spec["T"], spec["n_params"])
    infos = []
    for r in range(rounds):
        infos.append(run_headscope(spec, args, repeat, spec.get("extra", ()), allow_fail=True))
        if "failed" in infos[-1]:
            log(f"  {spec['name']}: Headscope failed: {infos[-1]['failed']}")
            return {"spec": spec, "failed": infos[-1]["failed"], "repeat": repeat, "rounds": r + 1,
                    "torch_estimate": estimate}
        log(f"  {spec['name']} round {r + 1}/{rounds}: Headscope {infos[-1]['forward_ms_median']:.1f} ms, "
            f"peak RSS {infos[-1]['peak_rss_mb']:.0f} MiB")
    return {"spec": spec, "head_ms": statistics.median(i["forward_ms_median"] for i in infos),
            "head_rounds": [i["forward_ms_median"] for i in infos], "rss": max(i["peak_rss_mb"] for i in infos),
            "repeat": repeat, "rounds": rounds, "maps": infos[0]["maps"], "T": infos[0]["T"],
            "torch_estimate": estimate, "head_map_ms": infos[-1].get("head_map_ms_median"),
            "head_map_ms_max": infos[-1].get("head_map_ms_max")}


def measure_recompute(spec, args):
    """Headscope only: switching off one head in the last layer, as in the app, redoes that
    layer alone (bench --incremental); the acceptance bound is 15% of a full forward."""
    rounds = []
    n = rounds_of(spec, args)
    for r in range(n):
        info = run_headscope(spec, args, spec["repeat"], ["--disable-heads", "11.0", "--incremental"])
        rounds.append(info)
        log(f"  recompute round {r + 1}/{n}: {info['recompute_ms_median']:.2f} ms of a full "
            f"{info['forward_ms_median']:.1f} ms ({100 * info['recompute_fraction']:.1f}%)")
    full = statistics.median(i["forward_ms_median"] for i in rounds)
    part = statistics.median(i["recompute_ms_median"] for i in rounds)
    return {"spec": spec, "full_ms": full, "recompute_ms": part, "fraction": part / full,
            "resume_layer": rounds[0]["resume_layer"]}


# --------------------------------------------------------------------------------------
# the report


def cpu():
    """(lscpu's model name, family / model / widest vector unit from /proc/cpuinfo).
    A virtual machine's model name is often the vendor's alone ("AMD EPYC"): the family,
    model and widest vector unit say which core it is (Zen 4 and Zen 5 both have AVX-512,
    with half and full 512-bit FMA throughput)."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break   # the first CPU's block is enough
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        name = re.search(r"^Model name:\s*(.+)$", out, re.M).group(1).strip()
    except (OSError, AttributeError):
        name = fields.get("model name", "unknown CPU")
    flags = fields.get("flags", "").split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2 + FMA" if "avx2" in flags and "fma" in flags else "no AVX2"
    if "avx512_bf16" in flags:
        isa += ", AVX512_BF16"
    core = f"family {fields.get('cpu family', '?')}, model {fields.get('model', '?')}, {isa}"
    return name, core


def machine():
    name, core = cpu()
    cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    with open("/proc/meminfo") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("MemTotal"))
    return f"{name} ({core}), {cores} cores (nproc), {kib / 1024 ** 2:.1f} GiB memory"


def blas():
    try:
        return os.readlink(BLAS_ALTERNATIVE)
    except OSError:
        return f"unknown ({BLAS_ALTERNATIVE} is not a symlink here)"


def blas_used(r):
    """The library the fastest setting's worker had mapped, named as a reader needs it."""
    path = r["blas"]
    kind = ("OpenBLAS" if "openblas" in os.path.basename(path)
            else "netlib reference BLAS" if "/blas/libblas" in path else "BLAS")
    via = " via LD_LIBRARY_PATH" if r["setting"][0] == "openblas" else ""
    return f"{kind}{via} (`{path}`), {r['setting'][1]} / {r['setting'][2]} threads"


def fmt_ms(ms):
    return f"{ms:.3f}" if ms < 10 else f"{ms:.1f}" if ms < 1000 else f"{ms:.0f}"


def mib(n_bytes):
    return n_bytes / 2 ** 20


def fmt_bytes(n_bytes):
    return f"{n_bytes / 2 ** 30:.1f} GiB" if n_bytes >= 2 ** 30 else f"{mib(n_bytes):.0f} MiB"


def table(results):
    lines = ["| workload | what | PyTorch setting (BLAS, torch / OpenBLAS threads) | PyTorch ms | Headscope ms | "
             "ratio (H/P) | target ratio | result | Headscope peak RSS MiB | PyTorch peak RSS MiB |",
             "|---|---|---|---:|---:|---:|---:|---|---:|---:|"]
    for r in results:
        s = r["spec"]
        target = f"≤ {r['target']:.3f} ({s['target'][0]:g}/{s['target'][1]:g})"
        lines.append(f"| {s['name']} | {describe(s)} | {setting_name(r['setting'])} | "
                     f"{fmt_ms(r['torch_ms'])} | {fmt_ms(r['head_ms'])} | {r['ratio']:.3f} | {target} | "
                     f"{'PASS' if r['passed'] else 'FAIL'} | {r['rss']:.0f} | {r['torch_rss']:.0f} |")
    return "\n".join(lines)


def decoder_table(results, solo, cpu_label):
    lines = ["| workload | what | PyTorch ms | Headscope ms | ratio (H/P) | PyTorch peak RSS MiB "
             "(estimate + runtime) | Headscope peak RSS MiB | PyTorch BLAS | CPU |",
             "|---|---|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        e = r["torch_estimate"]
        lines.append(f"| {r['spec']['name']} | {describe(r['spec'])} | {fmt_ms(r['torch_ms'])} | "
                     f"{fmt_ms(r['head_ms'])} | {r['ratio']:.3f} | {r['torch_rss']:.0f} "
                     f"({mib(e['total']):.0f} + {r['torch_baseline_rss']:.0f}) | {r['rss']:.0f} | "
                     f"{blas_used(r)} | {cpu_label} |")
    for r in solo:
        e = r["torch_estimate"]
        head_ms, head_rss = ("failed (below)", "—") if "failed" in r else (fmt_ms(r["head_ms"]), f"{r['rss']:.0f}")
        lines.append(f"| {r['spec']['name']} | {describe(r['spec'])} | not run | {head_ms} | — | "
                     f"would need ≈ {fmt_bytes(e['total'])} + runtime | {head_rss} | — | {cpu_label} |")
    failures = [f"- {r['spec']['name']}: Headscope failed, {r['failed']}" for r in solo if "failed" in r]
    on_demand = [f"- {r['spec']['name']}: a head's full map computed again from the kept queries and keys in "
                 f"{r['head_map_ms']:.0f} ms (median; slowest {r['head_map_ms_max']:.0f} ms)"
                 for r in [*results, *solo] if r.get("head_map_ms") is not None]
    notes = failures + on_demand
    return "\n".join(lines) + ("\n\n" + "\n".join(notes) if notes else "")


def estimate_lines(results, solo):
    lines = []
    for r in [*results, *solo]:
        e, c, t = r["torch_estimate"], r["spec"]["config"], r["spec"]["T"]
        lines.append(f"- {r['spec']['name']}: weights {r['spec']['n_params'] / 1e6:.1f}M x 4 B = "
                     f"{fmt_bytes(e['weights'])}; maps {c['num_hidden_layers']} x {c['num_attention_heads']} x "
                     f"{t}² x 4 B = {fmt_bytes(e['maps'])}; largest transient {fmt_bytes(e['transient'])}; "
                     f"total {fmt_bytes(e['total'])}")
    return "\n".join(lines)


def calibration_table(results):
    lines = ["| workload | median ms per setting (BLAS, torch / OpenBLAS threads) |", "|---|---|"]
    for r in results:
        cells = "; ".join(f"{setting_name(k)}: {fmt_ms(v)}" for k, v in r["calibration"].items())
        lines.append(f"| {r['spec']['name']} | {cells} |")
    return "\n".join(lines)


def recompute_table(recompute):
    if recompute is None:
        return "(not measured: run without --only, or include vit-b16)"
    r = recompute
    verdict = "PASS" if r["fraction"] < 0.15 else "FAIL"
    return ("| workload | change | full forward ms | recompute ms | fraction | target | result |\n"
            "|---|---|---:|---:|---:|---:|---|\n"
            f"| {r['spec']['name']} | head 11.0 switched off: layers {r['resume_layer']}.. redone | "
            f"{fmt_ms(r['full_ms'])} | {fmt_ms(r['recompute_ms'])} | {100 * r['fraction']:.1f}% | < 15% | {verdict} |")


def classic_section(results, recompute):
    return f"""{table(results)}

Ratio = Headscope median / PyTorch median; a workload passes when the ratio is at most the
target ratio (the target is written as the Headscope and PyTorch times it was set from).
Each side's figure is the median over rounds of that round's median forward; the two sides
alternate within each round, swapping who goes first every round.

**What each side times.** PyTorch: one forward of the repository's reference modules
(`tools/make_vit_checkpoints.py` `Reference`, `tools/make_vision_checkpoints.py`
`Dinov2Reference`, `tools/make_gpt2_checkpoints.py` `Gpt2`) on the same `model.safetensors`
weights Headscope loads, under `torch.inference_mode()`, from pixel values [1, 3, 224, 224]
(already resized, cropped and normalised by the reference image processor's steps, untimed) or token ids to the last output: every layer's per-head attention
probabilities kept (as transformers' eager attention returns them with
`output_attentions=True`) plus the classifier logits or the LM-head logits [T, 50257]. For
mha-*, `torch.nn.MultiheadAttention(E, H, batch_first=True)` on x [1, T, E] with
`need_weights=True, average_attn_weights=False`. Each measurement is a fresh process, run with
the (BLAS, torch threads, OpenBLAS threads) setting that was fastest in a calibration pass (below).
Headscope: `forward_ms_median` of `headscope-cli bench` on the same checkpoint folder and the
same image / token ids: the input's encoding (patch or token embedding) and the forward with
every head's map kept; loading the model and decoding the image are outside the timer.
Both sides give the same maps and logits, but not by the same work: Headscope skips what
feeds neither. With a causal mask (GPT-2) it leaves out the products' masked parts; with a
classifier (ViT-B/16) it runs the last layer's MLP for the [CLS] row the classifier reads,
not for all 197 rows (5% of the forward's products). PyTorch runs both in full.

**Interactive recompute** (Headscope only, `bench --disable-heads 11.0 --incremental`):
switching a head off in the last layer redoes that layer alone, from the layer inputs a
run with every head on kept, as the app's worker does. Medians over the rounds:

{recompute_table(recompute)}
"""


def decoder_section(results, solo, cpu_label):
    checks = [r["check"] for r in results if r.get("check") is not None]
    check_line = (f"\n--quick check: the eager attention's maps and logits matched the reference's "
                  f"(make_decoder_checkpoints.attention) to {max(checks):.1e} at most.\n" if checks else "")
    return f"""## Decoders: Hugging Face layouts, BF16 weights, every map kept

{decoder_table(results, solo, cpu_label)}

The checkpoints are tools/make_full_size_checkpoints.py's random-weight ones: each named
model's config.json, tensor names, file layout and BF16 dtype. Ratio = Headscope median /
PyTorch median (each the median over rounds of that round's median forward, the sides
alternating). Peak RSS: PyTorch's worker's own `getrusage` maximum (in brackets: the
estimate below, plus the worker's RSS before it loaded anything); Headscope's as `bench`
prints it.

**What each side times.** PyTorch: `make_decoder_checkpoints.forward` on the checkpoint's
weights upcast to float32 (as `from_pretrained(torch_dtype=torch.float32)` holds them),
under `torch.inference_mode()`, from the token ids to the LM-head logits [T, V] for every
position, every layer's per-head attention probabilities kept as transformers' eager
attention returns them with `output_attentions=True`. Its attention is
`bench_vs_torch.eager_attention`: the reference's RoPE, norms and masks without the
reference's self-checks (a float64 complex rotation, a per-head recomputation and kept raw
scores that transformers does not compute). Headscope: `forward_ms_median` of
`headscope-cli bench --tokens` on the same folder and ids; loading is outside both timers.
{check_line}
**PyTorch's memory, computed** (float32: weights, every layer's [H, T, T] map, and the
largest transient: a second score-sized tensor while a map is made, or the MLP's [T, I]
tensors, or the logits [T, V]; not counting the Python / torch runtime, OpenBLAS's buffers
or allocator slack):

{estimate_lines(results, solo)}
"""


def report(results, solo, args, command, recompute=None):
    classic = [r for r in results if "target" in r]
    decoders = [r for r in results if r["spec"]["kind"] == "decoder"]
    measured = results + solo
    repeats = sorted({r["repeat"] for r in measured})
    rounds = sorted({r["rounds"] for r in measured})
    calib_repeats = sorted({r["calib_repeat"] for r in results})
    torch_version = results[0]["torch_version"] if results else "?"
    name, core = cpu()
    openblas = (f"`{args.openblas_dir}`" if "openblas" in args.blas
                else f"not installed at `{args.openblas_dir}` (apt install libopenblas0-openmp): not tried")
    sections = []
    if classic:
        sections.append(classic_section(classic, recompute))
    if decoders or solo:
        sections.append(decoder_section(decoders, solo, f"{name} ({core})"))
    if results:
        calib = "/".join(map(str, calib_repeats))
        sections.append(f"""PyTorch calibration: median ms of {calib} forwards after one warm-up, per setting
(BLAS, torch threads / OpenBLAS threads):

{calibration_table(results)}
""")
    body = "\n".join(sections)
    return f"""# Headscope vs PyTorch: forward times with every attention map kept

Written by `tools/bench_vs_torch.py`; do not edit by hand, run it again.

- Date: {datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")}
- Machine: {machine()}
- PyTorch: {torch_version} (CPU, F32), run without {" and ".join(UNSET_FOR_TORCH)}; BLAS tried:
  OpenBLAS {openblas}, and the default libblas.so.3 (`{blas()}`)
- Headscope: `{args.cli_as_given} bench --threads {args.threads}`
- Command: `{command}`
- Rounds per workload: {"/".join(map(str, rounds))}; timed forwards per side per round, after one warm-up:
  {"/".join(map(str, repeats))}

{body}"""


def records(results, solo, args):
    """One JSON object per workload, each naming the CPU and BLAS it was measured with."""
    name, core = cpu()
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    out = []
    for r in [*results, *solo]:
        s = r["spec"]
        rec = {"workload": s["name"], "what": describe(s), "date": date, "cpu": name, "cpu_core": core,
               "headscope_ms": r.get("head_ms"), "headscope_rounds_ms": r.get("head_rounds"),
               "headscope_peak_rss_mb": r.get("rss"), "threads": args.threads, "repeat": r["repeat"],
               "rounds": r["rounds"]}
        if "failed" in r:
            rec["headscope_error"] = r["failed"]
        if "torch_ms" in r:
            rec.update(torch_ms=r["torch_ms"], torch_rounds_ms=r["torch_rounds"], ratio=r["ratio"],
                       torch_peak_rss_mb=r["torch_rss"], torch_baseline_rss_mb=r["torch_baseline_rss"],
                       torch_version=r["torch_version"], blas=r["blas"],
                       torch_setting={"blas": r["setting"][0], "torch_threads": r["setting"][1],
                                      "openblas_threads": r["setting"][2]})
        else:
            rec.update(torch_ms=None, torch_note="not run: PyTorch would need torch_estimate_bytes")
        if "torch_estimate" in r:
            rec["torch_estimate_bytes"] = r["torch_estimate"]
        if "target" in r:
            rec.update(target_ratio=r["target"], passed=r["passed"])
        out.append(rec)
    return out


# --------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [w["name"] for w in WORKLOADS]
    p.add_argument("--only", help="comma-separated workloads: " + ",".join(names))
    p.add_argument("--rounds", type=int, help="alternating rounds per workload (default 5; 3 for the decoders, "
                                              "1 for llama-1b-4096 and with --quick)")
    p.add_argument("--repeat", type=int, help="timed forwards per side per round (default per workload: 5 / 3 / 2 / 1; "
                                              "2 with --quick)")
    p.add_argument("--calib-repeat", type=int, help="forwards per setting when calibrating PyTorch (default 2; "
                                                    "1 for the decoders)")
    p.add_argument("--threads", type=int, default=2, help="headscope-cli bench --threads (default 2)")
    p.add_argument("--cli", default=DEFAULT_CLI,
                   help=f"headscope-cli (default {DEFAULT_CLI}, relative to the repository root)")
    p.add_argument("--models-dir", help=f"the checkpoints (default {DEFAULT_MODELS}; "
                                        f"with --quick {DEFAULT_QUICK_MODELS})")
    p.add_argument("--work-dir", default="/tmp/headscope-bench", help="where the test image is written")
    p.add_argument("--openblas-dir", default=DEFAULT_OPENBLAS,
                   help=f"OpenBLAS's libblas.so.3 for PyTorch's side (default {DEFAULT_OPENBLAS})")
    p.add_argument("--quick", action="store_true",
                   help="validate end to end in about a minute: decoder workloads on shrunk checkpoints, T = 64")
    p.add_argument("--out", help="also write the report to this Markdown file")
    p.add_argument("--json", help="also write one record per workload to this JSON file")
    p.add_argument("--torch-worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.only:
        unknown = set(args.only.split(",")) - set(names)
        if unknown:
            p.error(f"--only: unknown workload(s) {', '.join(sorted(unknown))}; choose from {', '.join(names)}")
        if args.quick:
            other = [w["name"] for w in WORKLOADS if w["name"] in args.only.split(",") and w["kind"] != "decoder"]
            if other:
                p.error(f"--quick runs the decoder workloads only, not {', '.join(other)}")
    for flag in ("rounds", "repeat", "calib_repeat"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            p.error("--rounds, --repeat and --calib-repeat must be at least 1")
    args.models_dir = args.models_dir or (DEFAULT_QUICK_MODELS if args.quick else DEFAULT_MODELS)
    return args


def main(argv):
    args = parse_args(argv)
    if args.torch_worker:
        torch_worker(json.loads(args.torch_worker))
        return
    sys.path.insert(0, TOOLS)
    command = shlex.join([sys.executable, *sys.argv])   # before paths are resolved: as typed
    args.cli_as_given = args.cli
    args.cli = args.cli if os.path.isabs(args.cli) else os.path.join(ROOT, args.cli)
    chosen = [w for w in WORKLOADS if not args.only or w["name"] in args.only.split(",")]
    if args.quick:   # the shrunk decoders; no shrunk 7B is written
        chosen = [w for w in chosen if w["kind"] == "decoder" and w["model"] not in BIG_MODELS]
    args.blas = blas_choices(args)
    if "openblas" not in args.blas:
        log(f"warning: no OpenBLAS at {args.openblas_dir} (apt install libopenblas0-openmp, or --openblas-dir): "
            f"PyTorch runs on the default libblas.so.3 ({blas()}) alone")
    ensure_models(args, chosen)
    results, solo = [], []
    for w in chosen:
        spec = make_spec(w, args)
        if w.get("torch", True):
            results.append(measure(spec, args))
            if "netlib" in blas_used(results[-1]):
                log(f"  warning: {w['name']}: PyTorch's fastest BLAS was the netlib reference BLAS; its times "
                    f"are not a fair comparison (install OpenBLAS)")
        else:
            log(f"{spec['name']}: Headscope alone (PyTorch's memory is computed, not measured)")
            solo.append(measure_headscope_only(spec, args))
    vit = [w for w in chosen if w["kind"] == "vit"]
    recompute = measure_recompute(make_spec(vit[0], args), args) if vit else None
    text = report(results, solo, args, command, recompute)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records(results, solo, args), f, indent=2)
            f.write("\n")
        log(f"wrote {args.json}")
    if args.out:
        # Keep the tokenizer section tools/bench_tokenizers.mjs maintains in the same file.
        kept = ""
        if os.path.exists(args.out):
            with open(args.out) as f:
                old = f.read()
            if "<!-- bench_tokenizers.mjs -->" in old:
                kept = "\n" + old[old.index("<!-- bench_tokenizers.mjs -->"):]
        with open(args.out, "w") as f:
            f.write(text.rstrip("\n") + "\n" + kept)
        log(f"wrote {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
