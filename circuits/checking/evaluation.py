"""Run a model on a batch of inputs and score every target on it (shared by the checker and the margins)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from circuits import limits
from circuits.checking import cores
from circuits.targets import Target, Tokens, once

SHARED_TOKENS = 16384  # a batch of fewer tokens is scored on one thread: too little work to share
CHUNK = 4096  # inputs per forward pass; bounds memory on long inputs
PASS_BYTES = 2**26  # what one forward pass's intermediates may take (64 MiB as rows_per_pass counts them; in fact up
# to ~1.5× that): a check stays well under 300 MB at its peak (issue 39; 1 GiB let 08 reach 380 MB), at no cost in time


def evaluate(
    model, targets: Sequence[Target], batch: list[Tokens], checked: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """ok and worst `[n_targets, len(batch)]`, inputs of one length run as one batch (chunked).

    `checked` `[n_targets]`, if given, gains the number of positions each target had an expectation at
    (NaN stays NaN for a target that does not count them)."""
    keys = [tuple(toks) for toks in batch]
    distinct = {k: n for n, k in enumerate(dict.fromkeys(keys))}
    if len(distinct) < len(batch):  # a repeated input is run once (random samples repeat short inputs)
        ok, worst = evaluate(model, targets, [list(k) for k in distinct], checked)
        at = [distinct[k] for k in keys]
        return ok[:, at], worst[:, at]
    ok = np.ones((len(targets), len(batch)), dtype=bool)
    worst = np.zeros((len(targets), len(batch)))
    parts = by_length(batch, lambda T: rows_per_pass(model, T))
    share = cores.workers() if len(parts) > 1 and sum(map(len, batch)) >= SHARED_TOKENS else 1
    done = cores.threaded(lambda part: _scored(model, targets, [batch[i] for i in part]), parts, share, once.joined())
    for part, (ok_part, worst_part, counted) in zip(parts, done):
        ok[:, part], worst[:, part] = ok_part, worst_part
        if checked is not None:
            for t, n in enumerate(counted):
                if n is not None:
                    checked[t] = np.nan_to_num(checked[t]) + n
    return ok, worst


def _scored(model, targets: Sequence[Target], sub: list[Tokens]) -> tuple[np.ndarray, np.ndarray, list]:
    """ok and worst `[n_targets, len(sub)]` for inputs of one length, and each target's count of the positions it
    had an expectation at (None: it counts none)."""
    ok = np.ones((len(targets), len(sub)), dtype=bool)
    worst = np.zeros((len(targets), len(sub)))
    counted = []
    limits.doing("running the model")
    trace = model.run(sub)
    for t, target in enumerate(targets):
        limits.doing(f"checking target {limits.quoted(target.label)}", f" on {_inputs(sub)}")
        with limits.blaming(sub, lambda toks, target=target: target.evaluate(model.run([toks]), [toks])):
            ev = target.evaluate(trace, sub)
        ok[t], worst[t] = ev.ok, ev.worst
        counted.append(None if ev.checked is None else float(np.sum(ev.checked)))
    return ok, worst, counted


def _inputs(sub: list[Tokens]) -> str:
    """`12 inputs of length 21`, `the input 'abc…'`: what a target is being checked on, for a message."""
    if len(sub) == 1:
        return f"the input {limits.shown_input(sub[0])[:40]} (length {len(sub[0])})"
    return f"{len(sub):,} inputs of length {len(sub[0])}"


def by_length(batch: Sequence[Tokens], rows=lambda T: CHUNK) -> list[list[int]]:
    """The indices of `batch` as the checker runs them: grouped by length, each group cut into `rows(length)`."""
    groups: dict[int, list[int]] = defaultdict(list)
    for i, toks in enumerate(batch):
        groups[len(toks)].append(i)
    return [
        idx[start : start + n]
        for L, idx in groups.items()
        for n in [max(1, rows(L))]
        for start in range(0, len(idx), n)
    ]


def rows_per_pass(model, T: int) -> int:
    """How many inputs of T tokens one forward pass may take: CHUNK, or fewer where the model's intermediates
    (q, k, v, scores and patterns, hidden units, residual streams; +1 token for a BOS) would pass PASS_BYTES."""
    T += 1
    per_token = 0
    for block in getattr(model, "blocks", ()):
        heads = len(block.heads)
        width = max((h.W_V.shape[0] + 2 * h.W_Q.shape[0] for h in block.heads), default=0)
        per_token += heads * (2 * T + width) + (3 * block.mlp.W_in.shape[0] if block.mlp is not None else 0)
        per_token += 6 * getattr(model, "d_model", 0)
    return int(min(CHUNK, max(1, PASS_BYTES // max(1, 8 * T * per_token))))
