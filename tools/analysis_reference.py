#!/usr/bin/python3
"""Writes the analysis golden files: tests/golden/analysis/<case>.json.

Run with Debian's NumPy:  /usr/bin/python3 tools/analysis_reference.py

An independent, deliberately plain implementation (loops and textbook formulas, in
float64) of what core/analysis/head_metrics.h, core/analysis/rollout.h and core/analysis/head_similarity.h
compute, on a few small seeded cases:

  text_cls         3 layers x 4 heads, T = 7, [CLS] ... [SEP], no mask, repeated ids
  causal_left_pad  2 layers x 3 heads, T = 6, causal mask with a left pad at 0: row 0
                   has no allowed key (all-zero weights), row 1 exactly one
  image_grid       2 layers x 2 heads, T = 10: [CLS] + a 3 x 3 grid of 16-pixel patches
  cross_attention  5 cross-attention heads [Tq = 6, Tk = 8] (target rows over source
                   columns: a forward alignment, a backward one, a sink, no habit, and one
                   with an all-zero row), source specials at 0 and 7: the metrics of
                   compute_cross_metrics alone (cross_metrics below)

Each file holds the inputs (weights [L][H][T][T] as float32 values, the mask, ids,
special flags, image geometry, top_k) and the expected outputs:

  metrics   per head, layer-major, the definitions of core/analysis/head_metrics.h
  rollout   per option set (fusion, discard_ratio, start/end, disabled heads): [T][T]
            Abnar & Zuidema's rollout with jacobgil/vit-explain's discard (the k lowest
            fused entries by a stable sort, flat index 0 spared), A' = (A + I) / 2 and
            each row over its own sum
  js        [N][N] mean Jensen-Shannon divergence in bits, as KL(P||M)/2 + KL(Q||M)/2
            (not the entropy form the C++ uses), over rows either map has weight in
  order     average-linkage leaf order of the float32-rounded js matrix, with cluster
            distances recomputed from scratch as means over leaf pairs (not the UPGMA
            update formula the C++ uses)
  mds       [N][2] classical MDS of the same matrix, via an explicit centring matrix J
            and numpy.linalg.eigh (each axis's sign is arbitrary)

The script refuses cases whose answers would hinge on float32 rounding: near-ties at
the discard cut, between candidate merges, or between the top MDS eigenvalues.
"""

import json
import math
import os

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT_DIR = os.path.join(ROOT, "tests", "golden", "analysis")


def short_float32(x):
    """The shortest decimal that reads back as the same float32 (keeps the files small)."""
    f = np.float32(x)
    value = float(str(f))
    assert np.float32(value) == f
    return value


def rounded(x):
    return float(f"{x:.12g}")


# ---------------------------------------------------------------------------- inputs

def make_maps(rng, L, H, T, mask):
    """Seeded softmax maps [L, H, T, T] with some built-in habits, as float32."""
    maps = np.zeros((L, H, T, T), dtype=np.float32)
    for l in range(L):
        for h in range(H):
            scores = rng.normal(size=(T, T)) * rng.uniform(0.5, 2.5)
            habit = (l * H + h) % 4
            for i in range(T):
                if habit == 0 and i >= 1:
                    scores[i, i - 1] += 3.0   # previous token
                elif habit == 1:
                    scores[i, 0] += 3.0       # sink on the first token
                elif habit == 2:
                    scores[i, i] += 2.0       # itself
            for i in range(T):
                allowed = mask[i] if mask is not None else np.ones(T, dtype=bool)
                if not allowed.any():
                    continue                  # a row with no allowed key stays all 0
                s = np.where(allowed, scores[i], -np.inf)
                e = np.exp(s - s[allowed].max())
                maps[l, h, i] = (e / e.sum()).astype(np.float32)
            maps[l, h] = np.vectorize(short_float32)(maps[l, h])
    return maps


# ---------------------------------------------------------------------------- metrics

def head_metrics(A, mask, ctx):
    A = A.astype(np.float64)
    T = A.shape[0]
    allowed = mask if mask is not None else np.ones((T, T), dtype=bool)
    rows = [i for i in range(T) if allowed[i].any() and A[i].sum() > 0]
    P = ctx["n_prefix_tokens"]
    gw = ctx["grid_width"]

    def centre(p):
        return np.array([(p % gw) + 0.5, (p // gw) + 0.5]) * ctx["patch_pixels"]

    out = {k: 0.0 for k in ["entropy", "entropy_norm", "mean_distance", "max_weight", "top_k_mass",
                            "sink_mass", "special_mass", "diag", "prev_token"]}
    distances = []
    prev = []
    for i in rows:
        a = A[i]
        h = -sum(x * math.log(x) for x in a if x > 0)
        n = int(allowed[i].sum())
        out["entropy"] += h
        out["entropy_norm"] += h / math.log(n) if n > 1 else 0.0
        if gw == 0:
            distances.append(sum(a[j] * abs(i - j) for j in range(T)))
        elif i >= P:
            patch = a[P:]
            if patch.sum() > 0:
                ci = centre(i - P)
                d = sum(patch[q] * np.linalg.norm(ci - centre(q)) for q in range(len(patch)))
                distances.append(d / patch.sum())
        out["max_weight"] += a.max()
        out["top_k_mass"] += np.sort(a)[::-1][: ctx["top_k"]].sum()
        out["sink_mass"] += a[0]
        out["special_mass"] += sum(a[j] for j in range(T) if ctx["special"] and ctx["special"][j])
        out["diag"] += a[i]
        if i >= 1:
            prev.append(a[i - 1])
    for k in out:
        out[k] = out[k] / len(rows) if rows else 0.0
    out["mean_distance"] = float(np.mean(distances)) if distances else 0.0
    out["prev_token"] = float(np.mean(prev)) if prev else 0.0
    induction = []
    ids = ctx["ids"]
    for i in range(len(ids)):
        earlier = [j for j in range(i) if ids[j] == ids[i]]
        if earlier and i in rows and earlier[-1] + 1 < T:
            induction.append(A[i, earlier[-1] + 1])
    out["induction"] = float(np.mean(induction)) if induction else None
    out["monotonicity"] = None   # cross-attention's alone
    return {k: (rounded(v) if v is not None else None) for k, v in out.items()}


# ---------------------------------------------------------------------------- rollout

def rollout(maps, fusion, ratio, start, end, disabled):
    L, H, T, _ = maps.shape
    end = L - 1 if end == -1 else end
    R = np.eye(T)
    for l in range(start, end + 1):
        heads = [maps[l, h].astype(np.float64) for h in range(H) if not (disabled and disabled[l][h])]
        if not heads:
            continue
        stack = np.stack(heads)
        fused = {"mean": stack.mean(axis=0), "max": stack.max(axis=0), "min": stack.min(axis=0)}[fusion]
        flat = fused.reshape(-1).copy()
        k = int(flat.size * ratio)
        order = np.argsort(flat, kind="stable")
        if 0 < k < flat.size:
            below, above = flat[order[k - 1]], flat[order[k]]
            assert (below == above == 0.0) or above - below > 1e-5 * max(abs(above), 1e-12), \
                f"near-tie at the discard cut: {below} vs {above}"
        lowest = order[:k]
        lowest = lowest[lowest != 0]
        flat[lowest] = 0.0
        a = flat.reshape(T, T)
        a = (a + np.eye(T)) / 2
        a = a / a.sum(axis=-1, keepdims=True)
        R = a @ R
    return R


# ---------------------------------------------------------------------------- similarity

def mean_js_bits(P, Q):
    P = P.astype(np.float64)
    Q = Q.astype(np.float64)
    total, n = 0.0, 0
    for i in range(P.shape[0]):
        if P[i].sum() <= 0 and Q[i].sum() <= 0:
            continue
        M = (P[i] + Q[i]) / 2

        def kl(p):
            return sum(p[j] * math.log2(p[j] / M[j]) for j in range(len(p)) if p[j] > 0)

        total += 0.5 * kl(P[i]) + 0.5 * kl(Q[i])
        n += 1
    return total / n if n else 0.0


def average_linkage_order(D):
    clusters = [[i] for i in range(D.shape[0])]   # each sorted by its lowest index, kept in that order
    while len(clusters) > 1:
        candidates = []
        for x in range(len(clusters)):
            for y in range(x + 1, len(clusters)):
                d = np.mean([D[a, b] for a in clusters[x] for b in clusters[y]])
                candidates.append((d, x, y))
        candidates.sort(key=lambda c: c[0])   # stable: equal distances keep (x, y) order
        if len(candidates) > 1:
            assert candidates[1][0] - candidates[0][0] > 1e-6, "near-tie between merges"
        _, x, y = candidates[0]
        merged = clusters[x] + clusters[y]
        clusters = [c for k, c in enumerate(clusters) if k not in (x, y)]
        clusters.append(merged)
        clusters.sort(key=min)
    return clusters[0]


def classical_mds(D, dims=2):
    N = D.shape[0]
    J = np.eye(N) - np.ones((N, N)) / N
    B = -0.5 * J @ (D ** 2) @ J
    values, vectors = np.linalg.eigh(B)
    top = np.argsort(values)[::-1]
    values, vectors = values[top], vectors[:, top]
    for k in range(min(dims + 1, N) - 1):
        assert values[k] - values[k + 1] > 1e-3 * abs(values[0]), "top MDS eigenvalues too close"
    return vectors[:, :dims] * np.sqrt(np.maximum(values[:dims], 0.0))


# ---------------------------------------------------------------------------- cases

def write_case(name, maps, mask, ctx, rollouts):
    L, H, T, _ = maps.shape
    metrics = []
    for l in range(L):
        for h in range(H):
            m = head_metrics(maps[l, h], mask, ctx)
            metrics.append({"layer": l, "head": h, **m})
    results = []
    for r in rollouts:
        R = rollout(maps, r["fusion"], r["discard_ratio"], r["start_layer"], r["end_layer"], r["disabled_heads"])
        assert np.allclose(R.sum(axis=1), 1.0)
        results.append({**r, "result": [[rounded(v) for v in row] for row in R]})
    heads = [maps[l, h] for l in range(L) for h in range(H)]
    N = len(heads)
    js = np.zeros((N, N))
    for a in range(N):
        for b in range(a + 1, N):
            js[a, b] = js[b, a] = mean_js_bits(heads[a], heads[b])
    # order and mds read the divergence as the C++ stores it: float32.
    js32 = np.vectorize(short_float32)(js).astype(np.float64)
    case = {
        "description": f"tools/analysis_reference.py: {L} layers x {H} heads, T = {T}",
        "n_layers": L, "n_heads": H, "T": T,
        "weights": [[[[short_float32(v) for v in row] for row in maps[l, h]] for h in range(H)] for l in range(L)],
        "mask": None if mask is None else [[bool(v) for v in row] for row in mask],
        **ctx,
        "metrics": metrics,
        "rollout": results,
        "js": [[float(v) for v in row] for row in js32],
        "order": [int(i) for i in average_linkage_order(js32)],
        "mds": [[rounded(v) for v in row] for row in classical_mds(js32)],
    }
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, name + ".json")
    with open(path, "w") as f:
        json.dump(case, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {os.path.getsize(path)} bytes")


def cross_metrics(A, special, top_k):
    """A cross-attention head's metrics: rows are target tokens, columns source tokens."""
    A = A.astype(np.float64)
    Tq, Tk = A.shape
    rows = [i for i in range(Tq) if A[i].sum() > 0]
    out = {k: 0.0 for k in ["entropy", "entropy_norm", "max_weight", "top_k_mass", "sink_mass", "special_mass"]}
    for i in rows:
        a = A[i]
        h = -sum(x * math.log(x) for x in a if x > 0)
        out["entropy"] += h
        out["entropy_norm"] += h / math.log(Tk) if Tk > 1 else 0.0
        out["max_weight"] += a.max()
        out["top_k_mass"] += np.sort(a)[::-1][:top_k].sum()
        out["sink_mass"] += a[0]
        out["special_mass"] += sum(a[j] for j in range(Tk) if special[j])
    for k in out:
        out[k] = out[k] / len(rows) if rows else 0.0
    # Consecutive rows that both have weight: does the centre over the source move forward?
    centres = [sum(j * A[i, j] for j in range(Tk)) if A[i].sum() > 0 else None for i in range(Tq)]
    steps = [(a, b) for a, b in zip(centres, centres[1:]) if a is not None and b is not None]
    out["monotonicity"] = sum(1 for a, b in steps if b >= a) / len(steps) if steps else None
    for k in ["mean_distance", "diag", "prev_token", "induction"]:
        out[k] = None   # positions of two sequences: not compared
    return {k: (rounded(v) if v is not None else None) for k, v in out.items()}


def write_cross_case(name, rng, H, Tq, Tk, special, top_k):
    maps = np.zeros((H, Tq, Tk), dtype=np.float32)
    for h in range(H):
        scores = rng.normal(size=(Tq, Tk))
        for i in range(Tq):
            if h == 0:
                scores[i, min(Tk - 1, (i * Tk) // Tq)] += 4.0             # forward alignment
            elif h == 1:
                scores[i, Tk - 1 - min(Tk - 1, (i * Tk) // Tq)] += 4.0    # backward
            elif h == 2:
                scores[i, 0] += 3.0                                       # sink
            e = np.exp(scores[i] - scores[i].max())
            maps[h, i] = (e / e.sum()).astype(np.float32)
        if h == 4:
            maps[h, 2] = 0.0   # a row with no distribution breaks the chain of steps
        maps[h] = np.vectorize(short_float32)(maps[h])
    case = {
        "description": f"tools/analysis_reference.py: {H} cross-attention heads, [{Tq}, {Tk}]",
        "n_heads": H, "Tq": Tq, "Tk": Tk, "special": list(special), "top_k": top_k,
        "weights": [[[short_float32(v) for v in row] for row in maps[h]] for h in range(H)],
        "metrics": [cross_metrics(maps[h], special, top_k) for h in range(H)],
    }
    path = os.path.join(OUT_DIR, name + ".json")
    with open(path, "w") as f:
        json.dump(case, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {os.path.getsize(path)} bytes")


def context(ids=(), special=(), grid=(0, 0), n_prefix=0, patch_pixels=1.0, top_k=5):
    return {"ids": list(ids), "special": list(special), "grid_width": grid[0], "grid_height": grid[1],
            "n_prefix_tokens": n_prefix, "patch_pixels": patch_pixels, "top_k": top_k}


def main():
    # [CLS] a b c a b [SEP]: a and b repeat, so induction looks at keys 2 and 3.
    rng = np.random.default_rng(6001)
    T = 7
    maps = make_maps(rng, 3, 4, T, None)
    disabled = [[False, False, True, False], [True] * 4, [False] * 4]
    write_case("text_cls", maps, None,
               context(ids=[101, 5, 7, 9, 5, 7, 102], special=[True] + [False] * 5 + [True], top_k=3),
               [
                   {"fusion": "mean", "discard_ratio": 0.0, "start_layer": 0, "end_layer": -1, "disabled_heads": []},
                   {"fusion": "max", "discard_ratio": 0.0, "start_layer": 0, "end_layer": -1, "disabled_heads": []},
                   {"fusion": "min", "discard_ratio": 0.0, "start_layer": 0, "end_layer": -1, "disabled_heads": []},
                   {"fusion": "mean", "discard_ratio": 0.5, "start_layer": 1, "end_layer": 2, "disabled_heads": []},
                   {"fusion": "max", "discard_ratio": 0.3, "start_layer": 0, "end_layer": -1, "disabled_heads": disabled},
                   {"fusion": "min", "discard_ratio": 0.9, "start_layer": 0, "end_layer": 1, "disabled_heads": []},
               ])

    # GPT-2-like, left-padded: causal, and key 0 (the pad) allowed for nobody.
    rng = np.random.default_rng(6002)
    T = 6
    mask = np.tril(np.ones((T, T), dtype=bool))
    mask[:, 0] = False
    maps = make_maps(rng, 2, 3, T, mask)
    write_case("causal_left_pad", maps, mask, context(ids=[0, 3, 8, 3, 8, 3], top_k=2),
               [
                   {"fusion": "mean", "discard_ratio": 0.0, "start_layer": 0, "end_layer": -1, "disabled_heads": []},
                   {"fusion": "max", "discard_ratio": 0.4, "start_layer": 0, "end_layer": -1, "disabled_heads": []},
                   {"fusion": "min", "discard_ratio": 0.0, "start_layer": 1, "end_layer": 1, "disabled_heads": []},
               ])

    # ViT-like: [CLS] + 3 x 3 patches of 16 pixels.
    rng = np.random.default_rng(6003)
    T = 10
    maps = make_maps(rng, 2, 2, T, None)
    write_case("image_grid", maps, None,
               context(special=[True] + [False] * 9, grid=(3, 3), n_prefix=1, patch_pixels=16.0, top_k=5),
               [
                   {"fusion": "mean", "discard_ratio": 0.9, "start_layer": 0, "end_layer": -1, "disabled_heads": []},
                   {"fusion": "max", "discard_ratio": 0.0, "start_layer": 0, "end_layer": -1, "disabled_heads": []},
               ])

    # T5 / BART-like cross-attention: 6 target tokens over 8 source tokens, </s> and a
    # prefix token special.
    write_cross_case("cross_attention", np.random.default_rng(6004), 5, 6, 8,
                     [True] + [False] * 6 + [True], 3)


if __name__ == "__main__":
    main()
