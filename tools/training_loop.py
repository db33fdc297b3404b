"""The training loop tools/train_text.py and tools/train_vision.py share: AdamW steps
with gradients clipped to norm 1, a log line every 100 steps and an evaluation every
`evaluate_every` steps (and at the last)."""

import json
import math
import time

import torch


def warmup_cosine(warmup, steps, hold=0.0):
    """LambdaLR factor: linear warm-up over `warmup` steps, then the full rate until
    `hold` x steps, then a cosine down to 0 at `steps`."""
    decay_from = int(steps * hold)

    def factor(s):
        if s < decay_from:
            return min(1.0, (s + 1) / warmup)
        return min(1.0, (s + 1) / warmup) * 0.5 * (1.0 + math.cos(math.pi * (min(s, steps) - decay_from) /
                                                                  (steps - decay_from)))
    return factor


def train(model, optimiser, schedule, steps, loss_at, evaluate, evaluate_every, began):
    """loss_at(step) -> the loss of that step's batch; evaluate() -> a dict for the log.
    Returns the log: one entry per 100 steps."""
    log = []
    for step in range(1, steps + 1):
        loss = loss_at(step)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        if step % 100 == 0 or step == steps:
            entry = {"step": step, "train_loss": round(float(loss), 4), "minutes": round((time.time() - began) / 60, 1)}
            if step % evaluate_every == 0 or step == steps:
                entry.update(evaluate())
            log.append(entry)
            print(json.dumps(entry), flush=True)
    return log
