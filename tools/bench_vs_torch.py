#!/usr/bin/python3
"""Times PyTorch (Debian's python3-torch, CPU) and `headscope-cli bench` side by side on
the same workloads and prints a Markdown report: machine, date, versions, and a table of
medians and ratios (Headscope time / PyTorch time) against each workload's target.

Run with Debian's PyTorch, NumPy and Pillow (python3-torch python3-numpy python3-pil):

    /usr/bin/python3 tools/bench_vs_torch.py [--only mha-64,gpt2-128] [--rounds 5]
        [--repeat K] [--threads 2] [--cli build/release/bin/headscope-cli]
        [--models-dir /tmp/headscope-full] [--out docs/benchmarks.md]

Workloads: one self-attention layer at three sizes (mha-*), ViT-B/16 at 224 px
(vit-b16) and GPT-2 small at 128 and 1024 tokens (gpt2-*), every head's map kept. The
models are the full-size random-weight checkpoints that tools/make_full_size_checkpoints.py
writes (run here when --models-dir lacks them); PyTorch runs the same weights in the
repository's own reference modules (make_vit_checkpoints.Reference, make_gpt2_checkpoints.Gpt2),
which return every head's attention probabilities as transformers' eager attention does
with output_attentions=True.

Each PyTorch measurement runs in a fresh process (this script with --torch-worker), because
OpenBLAS reads OPENBLAS_NUM_THREADS only when torch is first imported. A calibration pass
tries (torch threads, OpenBLAS threads) in {1, 2} x {1, 2} with a few forwards and keeps the
fastest per workload; then --rounds rounds alternate PyTorch and Headscope (which goes first
swaps every round), each giving one median of --repeat forwards. The table reports the median
over rounds per side. Progress goes to stderr, the report to stdout (and to --out).
"""

import argparse
import datetime
import errno
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(TOOLS, ".."))
DEFAULT_CLI = os.path.join("build", "release", "bin", "headscope-cli")
DEFAULT_MODELS = "/tmp/headscope-full"
BLAS_ALTERNATIVE = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
SETTINGS = [(1, 1), (2, 1), (1, 2), (2, 2)]   # (torch.set_num_threads, OPENBLAS_NUM_THREADS)
TOKEN_SEED = 20240611
VOCAB = 50257

# target: (Headscope ms, PyTorch ms) as the goal was stated; the ratio to meet is their quotient.
WORKLOADS = [
    {"name": "mha-64", "kind": "mha", "T": 64, "E": 128, "H": 8, "target": (0.07, 0.28), "repeat": 200},
    {"name": "mha-256", "kind": "mha", "T": 256, "E": 512, "H": 8, "target": (5, 5.5), "repeat": 20},
    {"name": "mha-1024", "kind": "mha", "T": 1024, "E": 768, "H": 12, "target": (50, 83), "repeat": 5},
    {"name": "vit-b16", "kind": "vit", "model": "vit-base-16", "target": (200, 270), "repeat": 5},
    {"name": "gpt2-128", "kind": "gpt2", "model": "gpt2-small", "T": 128, "target": (220, 300), "repeat": 5},
    {"name": "gpt2-1024", "kind": "gpt2", "model": "gpt2-small", "T": 1024, "target": (1800, 2670), "repeat": 3},
]


def log(message):
    print(message, file=sys.stderr, flush=True)


def describe(w):
    if w["kind"] == "mha":
        return f"1 self-attention layer, T={w['T']} E={w['E']} H={w['H']}"
    if w["kind"] == "vit":
        return "ViT-B/16, 224 px (197 tokens), 144 maps + classifier"
    return f"GPT-2 small, {w['T']} tokens, 144 maps + LM-head logits"


def token_ids(t):
    """The same seeded ids for both sides."""
    rng = random.Random(TOKEN_SEED + t)
    return [rng.randrange(VOCAB) for _ in range(t)]


# --------------------------------------------------------------------------------------
# the PyTorch side (runs in a child process: --torch-worker SPEC)


def torch_job(spec):
    """Returns (run, maps, T): `run()` is one forward from pixel values / token ids to the
    last output, returning everything it computed (so nothing is skipped)."""
    import torch

    sys.path.insert(0, TOOLS)
    if spec["kind"] == "mha":
        torch.manual_seed(0)
        mha = torch.nn.MultiheadAttention(spec["E"], spec["H"], batch_first=True).eval()
        x = torch.randn(1, spec["T"], spec["E"])
        # need_weights=True keeps PyTorch off its fused fast path, as it must to return the maps.
        return (lambda: mha(x, x, x, need_weights=True, average_attn_weights=False)), spec["H"], spec["T"]
    from demo_reference import load_safetensors   # the repository's F32 safetensors reader
    folder = spec["model_dir"]
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    stored, _ = load_safetensors(os.path.join(folder, "model.safetensors"))
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


def torch_worker(spec):
    """Prints one JSON line: median and minimum of spec['repeat'] forwards after a warm-up."""
    import torch

    torch.set_num_threads(spec["torch_threads"])
    run, maps, t = torch_job(spec)
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
                      "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}))


def run_torch(spec, setting, repeat):
    torch_threads, blas_threads = setting
    # OpenBLAS sizes its pool from the environment when torch loads it; OMP_NUM_THREADS only
    # matches torch's own pool to the set_num_threads the worker calls anyway.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads), OMP_NUM_THREADS=str(torch_threads))
    job = dict(spec, torch_threads=torch_threads, repeat=repeat)
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", json.dumps(job)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"PyTorch worker failed ({spec['name']}, setting {setting}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------
# the Headscope side


def cli_args(spec):
    if spec["kind"] == "mha":
        return ["--mha", "--T", str(spec["T"]), "--E", str(spec["E"]), "--H", str(spec["H"])]
    if spec["kind"] == "vit":
        return ["--model", spec["model_dir"], "--image", spec["image"]]
    return ["--model", spec["model_dir"], "--tokens", ",".join(map(str, spec["ids"]))]


def run_headscope(spec, args, repeat, extra=()):
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
    if done.returncode != 0:
        sys.exit(f"headscope-cli failed ({spec['name']}): {shlex.join(cmd[:8])} ...\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------
# inputs


def ensure_models(models_dir):
    wanted = [os.path.join(models_dir, d, "model.safetensors") for d in ("gpt2-small", "vit-base-16")]
    if all(os.path.exists(p) for p in wanted):
        return
    log(f"writing the full-size checkpoints to {models_dir} (tools/make_full_size_checkpoints.py)")
    subprocess.run([sys.executable, os.path.join(TOOLS, "make_full_size_checkpoints.py"), models_dir], check=True,
                   stdout=sys.stderr)


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
    return spec


# --------------------------------------------------------------------------------------
# measuring


def calibrate(spec, repeat):
    """The fastest (torch threads, OpenBLAS threads) for this workload, and every median."""
    medians = {}
    for setting in SETTINGS:
        r = run_torch(spec, setting, repeat)
        medians[setting] = r["forward_ms_median"]
        log(f"  calibration {spec['name']} torch={setting[0]} openblas={setting[1]}: {r['forward_ms_median']:.3f} ms")
    return min(medians, key=medians.get), medians


def measure(spec, args):
    repeat = args.repeat or spec["repeat"]
    calib_repeat = min(args.calib_repeat, repeat)
    log(f"{spec['name']}: calibrating PyTorch ({calib_repeat} forwards per setting)")
    best, calibration = calibrate(spec, calib_repeat)
    torch_ms, head_ms, rss, torch_info, head_info = [], [], [], None, None
    for r in range(args.rounds):
        # Alternate who goes first, so neither side always meets the other's leftover heat/cache.
        order = ("torch", "headscope") if r % 2 == 0 else ("headscope", "torch")
        for side in order:
            if side == "torch":
                torch_info = run_torch(spec, best, repeat)
                torch_ms.append(torch_info["forward_ms_median"])
            else:
                head_info = run_headscope(spec, args, repeat)
                head_ms.append(head_info["forward_ms_median"])
                rss.append(head_info["peak_rss_mb"])
        log(f"  round {r + 1}/{args.rounds}: PyTorch {torch_ms[-1]:.3f} ms, Headscope {head_ms[-1]:.3f} ms")
    if torch_info["maps"] != head_info["maps"] or torch_info["T"] != head_info["T"]:
        log(f"  warning: {spec['name']}: PyTorch computed {torch_info['maps']} maps at T={torch_info['T']}, "
            f"Headscope {head_info['maps']} at T={head_info['T']}")
    t, h = statistics.median(torch_ms), statistics.median(head_ms)
    target = spec["target"][0] / spec["target"][1]
    return {"spec": spec, "setting": best, "calibration": calibration, "torch_ms": t, "head_ms": h,
            "torch_rounds": torch_ms, "head_rounds": head_ms, "ratio": h / t, "target": target,
            "pass": h / t <= target, "rss": max(rss), "repeat": repeat, "calib_repeat": calib_repeat,
            "torch_version": torch_info["torch"]}


def measure_recompute(spec, args):
    """Headscope only: switching off one head in the last layer, as in the app, redoes that
    layer alone (bench --incremental); the acceptance bound is 15% of a full forward."""
    rounds = []
    for r in range(args.rounds):
        info = run_headscope(spec, args, spec["repeat"], ["--disable-heads", "11.0", "--incremental"])
        rounds.append(info)
        log(f"  recompute round {r + 1}/{args.rounds}: {info['recompute_ms_median']:.2f} ms of a full "
            f"{info['forward_ms_median']:.1f} ms ({100 * info['recompute_fraction']:.1f}%)")
    full = statistics.median(i["forward_ms_median"] for i in rounds)
    part = statistics.median(i["recompute_ms_median"] for i in rounds)
    return {"spec": spec, "full_ms": full, "recompute_ms": part, "fraction": part / full,
            "resume_layer": rounds[0]["resume_layer"]}


# --------------------------------------------------------------------------------------
# the report


def machine():
    # A virtual machine's model name is often the vendor's alone ("AMD EPYC"): the family,
    # model and widest vector unit say which core it is (Zen 4 and Zen 5 both have
    # AVX-512, with half and full 512-bit FMA throughput).
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break   # the first CPU's block is enough
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    model = fields.get("model name", "unknown CPU")
    flags = fields.get("flags", "").split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2 + FMA" if "avx2" in flags and "fma" in flags else "no AVX2"
    if "cpu family" in fields and "model" in fields:
        model += f" (family {fields['cpu family']}, model {fields['model']}, {isa})"
    cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    with open("/proc/meminfo") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("MemTotal"))
    return f"{model}, {cores} cores (nproc), {kib / 1024 ** 2:.1f} GiB memory"


def blas():
    try:
        return os.readlink(BLAS_ALTERNATIVE)
    except OSError:
        return f"unknown ({BLAS_ALTERNATIVE} is not a symlink here)"


def fmt_ms(ms):
    return f"{ms:.3f}" if ms < 10 else f"{ms:.1f}" if ms < 1000 else f"{ms:.0f}"


def table(results):
    lines = ["| workload | what | PyTorch setting (torch / OpenBLAS threads) | PyTorch ms | Headscope ms | "
             "ratio (H/P) | target ratio | result | Headscope peak RSS MiB |",
             "|---|---|---|---:|---:|---:|---:|---|---:|"]
    for r in results:
        s = r["spec"]
        target = f"≤ {r['target']:.3f} ({s['target'][0]:g}/{s['target'][1]:g})"
        lines.append(f"| {s['name']} | {describe(s)} | {r['setting'][0]} / {r['setting'][1]} | "
                     f"{fmt_ms(r['torch_ms'])} | {fmt_ms(r['head_ms'])} | {r['ratio']:.3f} | {target} | {'PASS' if r['pass'] else 'FAIL'} | "
                     f"{r['rss']:.0f} |")
    return "\n".join(lines)


def calibration_table(results):
    head = " | ".join(f"{t} / {b}" for t, b in SETTINGS)
    lines = [f"| workload | {head} |", "|---|" + "---:|" * len(SETTINGS)]
    for r in results:
        lines.append(f"| {r['spec']['name']} | " + " | ".join(fmt_ms(r["calibration"][s]) for s in SETTINGS) + " |")
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


def report(results, args, command, recompute=None):
    repeats = sorted({r["repeat"] for r in results})
    calib_repeats = sorted({r["calib_repeat"] for r in results})
    torch_version = results[0]["torch_version"] if results else "?"
    return f"""# Headscope vs PyTorch: forward times with every attention map kept

Written by `tools/bench_vs_torch.py`; do not edit by hand, run it again.

- Date: {datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")}
- Machine: {machine()}
- PyTorch: {torch_version} (CPU, F32), BLAS: `{blas()}`
- Headscope: `{args.cli_as_given} bench --threads {args.threads}`
- Command: `{command}`
- Rounds per workload: {args.rounds}; timed forwards per side per round, after one warm-up:
  {"/".join(map(str, repeats))}

{table(results)}

Ratio = Headscope median / PyTorch median; a workload passes when the ratio is at most the
target ratio (the target is written as the Headscope and PyTorch times it was set from).
Each side's figure is the median over rounds of that round's median forward; the two sides
alternate within each round, swapping who goes first every round.

**What each side times.** PyTorch: one forward of the repository's reference modules
(`tools/make_vit_checkpoints.py` `Reference`, `tools/make_gpt2_checkpoints.py` `Gpt2`) on the
same `model.safetensors` weights Headscope loads, under `torch.inference_mode()`, from pixel
values [1, 3, 224, 224] (already resized and normalised by the reference ViTImageProcessor
steps, untimed) or token ids to the last output: every layer's per-head attention
probabilities kept (as transformers' eager attention returns them with
`output_attentions=True`) plus the classifier logits or the LM-head logits [T, 50257]. For
mha-*, `torch.nn.MultiheadAttention(E, H, batch_first=True)` on x [1, T, E] with
`need_weights=True, average_attn_weights=False`. Each measurement is a fresh process, run with
the (torch threads, OpenBLAS threads) setting that was fastest in a calibration pass (below).
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

PyTorch calibration: median ms of {"/".join(map(str, calib_repeats))} forwards after one warm-up, per setting
(torch threads / OpenBLAS threads):

{calibration_table(results)}
"""


# --------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [w["name"] for w in WORKLOADS]
    p.add_argument("--only", help="comma-separated workloads: " + ",".join(names))
    p.add_argument("--rounds", type=int, default=5, help="alternating rounds per workload (default 5)")
    p.add_argument("--repeat", type=int, help="timed forwards per side per round (default 5; 3 for gpt2-1024)")
    p.add_argument("--calib-repeat", type=int, default=2, help="forwards per setting when calibrating PyTorch")
    p.add_argument("--threads", type=int, default=2, help="headscope-cli bench --threads (default 2)")
    p.add_argument("--cli", default=DEFAULT_CLI,
                   help=f"headscope-cli (default {DEFAULT_CLI}, relative to the repository root)")
    p.add_argument("--models-dir", default=DEFAULT_MODELS, help=f"full-size checkpoints (default {DEFAULT_MODELS})")
    p.add_argument("--work-dir", default="/tmp/headscope-bench", help="where the test image is written")
    p.add_argument("--out", help="also write the report to this Markdown file")
    p.add_argument("--torch-worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.only:
        unknown = set(args.only.split(",")) - set(names)
        if unknown:
            p.error(f"--only: unknown workload(s) {', '.join(sorted(unknown))}; choose from {', '.join(names)}")
    if args.rounds < 1 or (args.repeat is not None and args.repeat < 1) or args.calib_repeat < 1:
        p.error("--rounds, --repeat and --calib-repeat must be at least 1")
    return args


def main(argv):
    args = parse_args(argv)
    if args.torch_worker:
        torch_worker(json.loads(args.torch_worker))
        return
    command = shlex.join([sys.executable, *sys.argv])   # before paths are resolved: as typed
    args.cli_as_given = args.cli
    args.cli = args.cli if os.path.isabs(args.cli) else os.path.join(ROOT, args.cli)
    chosen = [w for w in WORKLOADS if not args.only or w["name"] in args.only.split(",")]
    if any("model" in w for w in chosen):
        ensure_models(args.models_dir)
    results = [measure(make_spec(w, args), args) for w in chosen]
    vit = [w for w in chosen if w["kind"] == "vit"]
    recompute = measure_recompute(make_spec(vit[0], args), args) if vit else None
    text = report(results, args, command, recompute)
    print(text)
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
