#!/usr/bin/python3
"""Headscope against an earlier build of itself: is any workload slower than it was?

Runs `headscope-cli bench` of two builds (--base-cli, an earlier commit's; --cli, this
tree's) on tools/bench_vs_torch.py's workloads and inputs, alternating the two builds
round by round so that both see the same machine, and prints one Markdown row per
workload: each build's median forward time and peak RSS, and their ratio. No PyTorch is
involved. Build the earlier commit with, for example:

    git worktree add /tmp/base <commit>
    cmake -S /tmp/base -B /tmp/base/build -DCMAKE_BUILD_TYPE=Release \\
          -DHEADSCOPE_BUILD_GUI=OFF -DHEADSCOPE_BUILD_TESTS=OFF
    cmake --build /tmp/base/build --target headscope-cli

Usage: tools/bench_builds.py --base-cli /tmp/base/build/bin/headscope-cli \\
           [--only vit-b16,gpt2-1024] [--rounds 3] [--out report.md]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_vs_torch as bench  # noqa: E402  (the workloads, their inputs and the CLI's arguments)


def main():
    names = [w["name"] for w in bench.WORKLOADS]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-cli", required=True, help="the earlier build's headscope-cli")
    p.add_argument("--cli", default=bench.DEFAULT_CLI, help=f"this build's headscope-cli (default {bench.DEFAULT_CLI})")
    p.add_argument("--only", help="comma-separated workloads: " + ",".join(names))
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds per workload (default 3)")
    p.add_argument("--threads", type=int, default=2, help="headscope-cli bench --threads (default 2)")
    p.add_argument("--models-dir", default=bench.DEFAULT_MODELS, help=f"the checkpoints (default {bench.DEFAULT_MODELS})")
    p.add_argument("--work-dir", default="/tmp/headscope-bench", help="where the test image is written")
    p.add_argument("--out", help="also write the report to this Markdown file")
    args = p.parse_args()
    args.quick = False
    for cli in (args.cli, args.base_cli):
        if not os.access(cli, os.X_OK):
            sys.exit(f"{cli}: no such program (build it first)")
    chosen = [w for w in bench.WORKLOADS if not args.only or w["name"] in args.only.split(",")]
    unknown = set(args.only.split(",")) - set(names) if args.only else set()
    if unknown:
        sys.exit(f"--only: no workload {', '.join(sorted(unknown))} (known: {', '.join(names)})")
    bench.ensure_models(args, chosen)

    rows = []
    for w in chosen:
        spec = bench.make_spec(w, args)
        extra = w.get("extra", [])
        times = {"base": [], "this": []}
        peaks = {"base": [], "this": []}
        for r in range(args.rounds):
            # The builds take turns going first, so neither always runs on a warmer machine.
            order = [("base", args.base_cli), ("this", args.cli)]
            for side, cli in order if r % 2 == 0 else reversed(order):
                cmd = [cli, "bench", *bench.cli_args(spec), "--repeat", str(w["repeat"]),
                       "--threads", str(args.threads), *extra]
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"{cli} failed on {w['name']}: {done.stderr.strip()}")
                result = json.loads(done.stdout.strip().splitlines()[-1])
                times[side].append(result["forward_ms_median"])
                peaks[side].append(result["peak_rss_mb"])
            bench.log(f"{w['name']} round {r + 1}: base {times['base'][-1]:.1f} ms, this {times['this'][-1]:.1f} ms")
        base_ms, this_ms = statistics.median(times["base"]), statistics.median(times["this"])
        rows.append(f"| {w['name']} | {base_ms:.4g} | {this_ms:.4g} | {this_ms / base_ms:.3f} | "
                    f"{max(peaks['base']):.0f} | {max(peaks['this']):.0f} |")

    report = "\n".join([
        "- Machine: {} ({}), {} cores".format(*bench.cpu(), os.cpu_count()),
        f"- Builds: base `{args.base_cli}`, this `{args.cli}`; `bench --threads {args.threads}`, "
        f"{args.rounds} alternating rounds, each the median of its timed forwards",
        "",
        "| workload | base ms | this ms | ratio (this/base) | base peak RSS MiB | this peak RSS MiB |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
    ])
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report + "\n")


if __name__ == "__main__":
    main()
