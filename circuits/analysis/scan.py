"""Head scan: ask every head of a model the puzzles' questions (previous-token, induction, …) and rank the answers.

A head's score for a behaviour is its mean attention on the behaviour's target, over the
query rows that HAVE a target (and, for first-token, not position 0, where every head
trivially attends to the first token). TransformerLens's "mul" score averages over every
row instead, so rows without a target (the whole first copy of a repeated sequence, for
induction) pull even a perfect head down to about 0.5; here a perfect head scores 1.
A head "shows" a behaviour when its score is at least the threshold (default 0.5: most of
its attention, on average, lands on the target).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from circuits.errors import CircuitError
from circuits.model.transformer import Model
from circuits.targets.behaviours import BEHAVIOURS, DEFAULT_BEHAVIOURS, DEFAULT_THRESHOLD, mass_on_target

MAX_BATCH = 64  # `circuits scan --batch`: patterns take batch × heads × tokens² numbers
MAX_PATTERN_BYTES = 2**29  # `circuits scan`: the attention patterns it may hold (512 MiB; the peak is about 3× that)


@dataclass(frozen=True)
class HeadScore:
    """One head's score for one behaviour, and how many query rows it was averaged over."""

    behaviour: str
    layer: int
    head: int
    score: float
    rows: int

    @property
    def name(self) -> str:
        return f"head {self.layer}.{self.head}"


@dataclass(frozen=True)
class ScanResult:
    """Scores per behaviour, best head first, and the threshold that marks a head as showing it."""

    ranked: dict[str, list[HeadScore]]
    threshold: float
    inputs: tuple[int, int]  # (batch, seq) of the token ids scanned

    def top(self, behaviour: str, n: int = 1) -> list[HeadScore]:
        return self._of(behaviour)[:n]

    def found(self, behaviour: str) -> list[HeadScore]:
        """The heads at or above the threshold, best first."""
        return [s for s in self._of(behaviour) if s.score >= self.threshold]

    def _of(self, behaviour: str) -> list[HeadScore]:
        if behaviour not in self.ranked:
            raise CircuitError(f"the scan did not look for {behaviour!r}; it looked for {', '.join(self.ranked)}")
        return self.ranked[behaviour]

    def to_dict(self) -> dict:
        return {
            "threshold": self.threshold,
            "inputs": {"batch": self.inputs[0], "seq": self.inputs[1]},
            "behaviours": {b: [asdict(s) for s in scores] for b, scores in self.ranked.items()},
        }


def repeated_inputs(
    model: Model, seq_len: int = 20, batch: int = 4, seed: int = 0, bos_id: int | None = None
) -> np.ndarray:  # -> [batch, (1 +) 2·seq_len]
    """Random tokens repeated once, BOS in front if the vocabulary has one: every behaviour has targets here.

    Each half draws distinct tokens when the vocabulary has enough, so no target is ambiguous.
    """
    if bos_id is None and model.vocab.bos is not None:
        bos_id = model.vocab.id(model.vocab.bos)
    choices = np.array([i for i in range(len(model.vocab)) if i != bos_id])  # [n_choices]
    if seq_len < 1 or batch < 1:
        raise CircuitError(f"seq_len and batch must be at least 1; got seq_len={seq_len}, batch={batch}")
    T = 2 * seq_len + (bos_id is not None)
    if model.n_ctx is not None and T > model.n_ctx:
        raise CircuitError(
            f"a repeated sequence of seq_len {seq_len} has {T} tokens but n_ctx is {model.n_ctx}; "
            f"use seq_len ≤ {(model.n_ctx - (bos_id is not None)) // 2}"
        )
    rng = np.random.default_rng(seed)
    # Distinct tokens within a half (when the vocabulary allows) give every target one right answer.
    distinct = seq_len <= len(choices)
    half = np.stack([rng.choice(choices, size=seq_len, replace=not distinct) for _ in range(batch)])  # [batch, seq_len]
    ids = np.concatenate([half, half], axis=1)  # [batch, 2·seq_len]
    if bos_id is not None:
        ids = np.concatenate([np.full((batch, 1), bos_id), ids], axis=1)  # [batch, 1 + 2·seq_len]
    return ids.astype(np.int64)


def targets_for(behaviour: str, ids: np.ndarray) -> np.ndarray:  # [b, T] -> [b, T], −1 where no target
    if behaviour not in BEHAVIOURS:
        raise CircuitError(f"unknown behaviour {behaviour!r}; choose from {', '.join(BEHAVIOURS)}")
    targets = BEHAVIOURS[behaviour](ids).copy()
    if behaviour == "first-token":
        targets[:, 0] = -1  # position 0 can only attend to itself: no evidence either way
    return targets


def head_scores(pattern: np.ndarray, targets: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, int]:
    """pattern [b, h, T, T], targets [b, T] -> mean mass on target per head [h], and the rows counted."""
    mass = mass_on_target(pattern, targets, valid)  # [b, h, T], NaN where no target
    has = ~np.isnan(mass[:, 0])  # [b, T]
    rows = int(has.sum())
    if rows == 0:
        return np.full(pattern.shape[1], np.nan), 0
    return np.nansum(mass, axis=(0, 2)) / rows, rows  # [h]


def scan(
    model: Model,
    ids: np.ndarray | None = None,
    behaviours: Sequence[str] = DEFAULT_BEHAVIOURS,
    threshold: float = DEFAULT_THRESHOLD,
    valid: np.ndarray | None = None,
    **inputs,
) -> ScanResult:
    """Score every head of `model` for each behaviour on token ids [b, T] (default:
    `repeated_inputs(model, **inputs)`)."""
    if isinstance(behaviours, str):
        behaviours = (behaviours,)
    for b in behaviours:
        targets_for(b, np.zeros((1, 1), dtype=np.int64))  # unknown names fail before the forward pass
    if not 0.0 <= threshold <= 1.0:
        raise CircuitError(f"threshold {threshold} is not an attention mass; choose a number in [0, 1]")
    ids = repeated_inputs(model, **inputs) if ids is None else np.asarray(ids)
    if ids.ndim == 1:
        ids = ids[None]
    valid = np.ones(ids.shape, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    model.encode(ids)  # checks ids and length, with the model's own messages
    trace = model.run_ids(ids, valid)
    ranked = {}
    for b in behaviours:
        targets = targets_for(b, ids)
        scores = []
        for l, layer in enumerate(trace.layers):
            if layer.pattern is None:
                continue
            per_head, rows = head_scores(layer.pattern, targets, valid)  # [h]
            if rows == 0:
                raise CircuitError(
                    f"no query row of these inputs has a {b} target; scan a repeated sequence (scan(model) makes one)"
                )
            scores += [HeadScore(b, l, h, float(s), rows) for h, s in enumerate(per_head)]
        ranked[b] = sorted(scores, key=lambda s: (-s.score, s.layer, s.head))
    return ScanResult(ranked, float(threshold), tuple(ids.shape))
