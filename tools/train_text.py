#!/usr/bin/python3
"""Trains builtin:tiny-story, a small character-level GPT-2 with learned heads, and
writes it as a Hugging Face GPT-2 folder: assets/models/tiny-story/.

Run with Debian's PyTorch on the CPU (packages python3-torch and bible-kjv; see
`third_party/install-deps.sh --with-torch`):

    /usr/bin/python3 tools/train_text.py            # ~25 minutes on this machine's 2 cores

Corpus: the King James Version of the Bible (public domain; Debian's bible-kjv-text,
read through its `bible` program). The last books (Jude, Revelation) are held out: the
script measures on them and never trains on them.

Tokenizer: bytes alone, in GPT-2's file format: vocab.json holds GPT-2's 256 byte
tokens and <|endoftext|>, merges.txt holds no merges. One character of English is one
token, so the heads are easy to read (a previous-token head is a stripe one cell off the
diagonal), and there are few enough tokens (63 occur in the text) for a 2-core CPU to
learn an induction head within the budget. Earlier recipes did not, in 30 minutes: a
1024-token BPE (previous token 0.14-0.25, induction at chance after 1200-1800 steps),
and characters with text and repeats alone (induction formed after ~700 steps, but the
best previous-token head stayed at 0.2-0.4 on prose: it looked a few characters back,
not one). The skip rows below fixed that.

Model: GPT-2 (tools/make_gpt2_checkpoints.py's reference `Gpt2`, the architecture the
checkpoint loader reads), L=2 x H=4 heads, width 128, context 128, LM head tied to wte.

Each training row is one of three kinds (Olsson et al. 2022 on why the last two matter):
- text (35%): 129 characters of the training books, loss on every character;
- repeats (35%): spans of 4-40 characters said two to four times over, half of the
  spans random characters and half spans of the text; loss only on the later copies,
  which only a head that looks up "what came after this the last time" can predict:
  an induction head;
- skips (30%): random characters or (half the rows) text, where about 30% of the
  characters repeat the character two back, loss on those only: predicting them needs
  a head that looks exactly one token back, in prose too, which the induction head
  builds on (its keys are "the token before me").

Everything is seeded and runs on N_THREADS threads, so a rerun on this machine repeats
the losses and head scores that training.json records. The weights are saved as F16.
"""

import json
import os
import random
import shutil
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402
from make_gpt2_checkpoints import BYTE_ENCODER, Gpt2, write_json  # noqa: E402
from training_loop import train, warmup_cosine  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT_DIR = os.path.join(ROOT, "assets", "models", "tiny-story")

SEED = 20261122
N_THREADS = 2
E, H, L, N_POSITIONS = 128, 4, 2, 128
BATCH, STEPS, WARMUP, LR = 16, 4800, 100, 1.5e-3
TEXT_ROWS, REPEAT_ROWS = 0.35, 0.35          # the rest: skip rows
TEXT_SPANS = 0.5                             # of the repeated spans, those taken from the text
SKIP_RATE = 0.3
HELD_OUT_BOOKS = ("Jude", "Revelation")
EOT = "<|endoftext|>"


# --------------------------------------------------------------------------------------
# corpus and tokenizer


def read_kjv():
    """(training verses, held-out verses), each a list of verse strings."""
    try:
        text = subprocess.run(["bible", "-l10000", "Gen1:1-Rev22:21"], check=True, capture_output=True,
                              text=True).stdout
    except FileNotFoundError:
        sys.exit("train_text.py: the `bible` program is missing: apt install bible-kjv bible-kjv-text")
    train_verses, held_out = [], []
    book = ""
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith("  "):           # a chapter heading: "Genesis 1", "1 Kings 3"
            book = line.rsplit(" ", 1)[0]
            continue
        verse = line.strip().split(" ", 1)[1]   # drop the verse number
        (held_out if book in HELD_OUT_BOOKS else train_verses).append(verse)
    return train_verses, held_out


def byte_vocab():
    """GPT-2's byte tokens, in GPT-2's order, then <|endoftext|>."""
    vocab = {ch: i for i, ch in enumerate(BYTE_ENCODER.values())}
    vocab[EOT] = len(vocab)
    return vocab


def byte_ids(vocab):
    """[256]: the token id of each byte value."""
    return [vocab[BYTE_ENCODER[b]] for b in range(256)]


# --------------------------------------------------------------------------------------
# training rows: [T + 1] ids and [T + 1] loss weights (weight k counts the loss of
# predicting token k from the tokens before it; weight 0 is never used)


def text_row(rng, corpus):
    start = rng.randrange(len(corpus) - N_POSITIONS - 1)
    return corpus[start:start + N_POSITIONS + 1], [1.0] * (N_POSITIONS + 1)


def repeat_row(rng, corpus, alphabet):
    row, weight = [], []
    while len(row) < N_POSITIONS + 1:
        n, copies = rng.randint(4, 40), rng.randint(2, 4)
        if rng.random() < TEXT_SPANS:
            start = rng.randrange(len(corpus) - n)
            span = corpus[start:start + n]
        else:
            span = [rng.choice(alphabet) for _ in range(n)]
        row += span
        weight += [0.0] * n
        for _ in range(copies - 1):
            row += span
            weight += [1.0] * n
    return row[:N_POSITIONS + 1], weight[:N_POSITIONS + 1]


def skip_row(rng, corpus, alphabet):
    """Random characters or (half the rows) text, where about SKIP_RATE of the
    characters are replaced by the one two back: the text rows teach the head to look
    one back in prose too, whatever the characters around."""
    if rng.random() < 0.5:
        row = [rng.choice(alphabet) for _ in range(N_POSITIONS + 1)]
    else:
        row = text_row(rng, corpus)[0][:]
    weight = [0.0] * (N_POSITIONS + 1)
    for k in range(2, N_POSITIONS + 1):
        if rng.random() < SKIP_RATE:
            row[k] = row[k - 2]
            weight[k] = 1.0
    return row, weight


def batch(rng, corpus, alphabet):
    rows, weights = [], []
    for _ in range(BATCH):
        kind = rng.random()
        if kind < TEXT_ROWS:
            row, weight = text_row(rng, corpus)
        elif kind < TEXT_ROWS + REPEAT_ROWS:
            row, weight = repeat_row(rng, corpus, alphabet)
        else:
            row, weight = skip_row(rng, corpus, alphabet)
        rows.append(row)
        weights.append(weight)
    return torch.tensor(rows), torch.tensor(weights)


def loss_of(model, ids, weight=None):
    _, logits = model(ids[:, :-1])
    losses = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1),
                                               reduction="none")
    if weight is None:
        return losses.mean()
    w = weight[:, 1:].reshape(-1)
    return (losses * w).sum() / w.sum()


# --------------------------------------------------------------------------------------
# what was learnt: the head scores of core/analysis/head_metrics.h, computed here in PyTorch


def head_scores(model, ids):
    """Per head [L, H]: prev_token (mean of A[i, i-1]) and induction (TransformerLens'
    detector: at a token seen before, latest at j, the weight on j + 1)."""
    with torch.no_grad():
        attentions, _ = model(torch.tensor(ids))
    latest, pairs = {}, []
    for i, token in enumerate(ids):
        if token in latest:
            pairs.append((i, latest[token] + 1))
        latest[token] = i
    prev = torch.stack([a[:, 1:, :].diagonal(dim1=-2, dim2=-1).mean(-1) for a in attentions])
    rows = torch.tensor([i for i, _ in pairs])
    cols = torch.tensor([j for _, j in pairs])
    induction = torch.stack([a[:, rows, cols].mean(-1) for a in attentions])
    return prev, induction


def evaluate(model, held_out_ids, typed):
    """Held-out loss; previous-token scores on held-out text and induction scores on
    60 distinct random characters of `typed` said twice (as tests/core/models/
    test_trained_models.cpp measures), each the mean over 8 samples, best head named."""
    model.eval()
    rng = random.Random(SEED + 1)
    t = N_POSITIONS + 1
    with torch.no_grad():
        windows = [held_out_ids[s:s + t] for s in range(0, len(held_out_ids) - t, t)]
        losses = [float(loss_of(model, torch.tensor(windows[i:i + 64]))) for i in range(0, len(windows), 64)]
    prev = induction = 0
    for _ in range(8):
        start = rng.randrange(len(held_out_ids) - N_POSITIONS)
        prev = prev + head_scores(model, held_out_ids[start:start + N_POSITIONS])[0] / 8
        tokens = rng.sample(typed, 60)   # distinct: each one's earlier occurrence is its copy
        induction = induction + head_scores(model, tokens + tokens)[1] / 8
    model.train()
    return {
        "held_out_loss": round(sum(losses) / len(losses), 4),
        "prev_token_best": round(float(prev.max()), 4), "prev_token_head": list(divmod(int(prev.argmax()), H)),
        "induction_best": round(float(induction.max()), 4),
        "induction_head": list(divmod(int(induction.argmax()), H)),
    }


# --------------------------------------------------------------------------------------


def config(v):
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": v,
            "n_positions": N_POSITIONS, "n_ctx": N_POSITIONS, "n_embd": E, "n_layer": L, "n_head": H,
            "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
            "bos_token_id": v - 1, "eos_token_id": v - 1, "scale_attn_weights": True, "torch_dtype": "float16"}


def main():
    began = time.time()
    torch.manual_seed(SEED)
    torch.set_num_threads(N_THREADS)
    rng = random.Random(SEED)

    train_verses, held_out_verses = read_kjv()
    vocab = byte_vocab()
    to_id = byte_ids(vocab)
    corpus = [to_id[b] for b in ("\n".join(train_verses) + "\n").encode("utf-8")]
    held_out_ids = [to_id[b] for b in ("\n".join(held_out_verses) + "\n").encode("utf-8")]
    alphabet = sorted(set(corpus))   # the characters of the text: random rows draw from them
    typed = [t for t in alphabet if t != to_id[ord("\n")]]   # what a user can type on one line
    print(f"{len(alphabet)} characters; training text {len(corpus)} tokens, held out {len(held_out_ids)}"
          f" ({time.time() - began:.0f} s)", flush=True)

    model = Gpt2(len(vocab), E, H, L, N_POSITIONS)
    with torch.no_grad():   # GPT-2's initialisation
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif ".ln_" in name or name.startswith("ln_"):
                p.fill_(1.0)
            else:
                p.normal_(0.0, 0.02)
    optimiser = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.98), weight_decay=0.0)
    # Warm up, hold (heads form on a plateau and need the full rate to leave it), then
    # decay over the last 15%.
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, warmup_cosine(WARMUP, STEPS, hold=0.85))

    def loss_at(step):
        ids, weight = batch(rng, corpus, alphabet)
        return loss_of(model, ids, weight)

    log = train(model, optimiser, schedule, STEPS, loss_at, lambda: evaluate(model, held_out_ids, typed),
                400, began)

    minutes = (time.time() - began) / 60
    final = log[-1]
    shutil.rmtree(OUT_DIR, ignore_errors=True)
    os.makedirs(OUT_DIR)
    state = {"transformer." + k: t.detach().half().contiguous() for k, t in model.state_dict().items()}
    save_safetensors(os.path.join(OUT_DIR, "model.safetensors"), state, {"format": "pt"})
    write_json(os.path.join(OUT_DIR, "config.json"), config(len(vocab)))
    write_json(os.path.join(OUT_DIR, "vocab.json"), vocab)
    with open(os.path.join(OUT_DIR, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
    write_json(os.path.join(OUT_DIR, "training.json"), {
        "command": "/usr/bin/python3 tools/train_text.py", "seed": SEED, "threads": N_THREADS,
        "minutes": round(minutes, 1), "steps": STEPS, "batch": BATCH, "tokens_per_sequence": N_POSITIONS,
        "rows": {"text": TEXT_ROWS, "repeats": REPEAT_ROWS, "skips": round(1 - TEXT_ROWS - REPEAT_ROWS, 2)},
        "corpus": "King James Version (bible-kjv-text), held out: " + ", ".join(HELD_OUT_BOOKS),
        "final": final, "log": log})
    print(f"wrote {OUT_DIR} in {minutes:.1f} minutes: {json.dumps(final)}")


if __name__ == "__main__":
    main()
