"""Tolerance probes for the audit: answers just outside what a target should tolerate.

The audit's other mutants are large edits (an entry negated, zeroed, filled with the matrix's largest). A target
can kill every one of them and still be loose enough to admit a small wrong write: a bias a little larger than
its tolerance in a row of a matrix that writes what the targets read (W_V, W_O, W_out, W_U). Each probe adds such
a bias to one row; it comes with a twin adding a large bias to the same row. When the large twin passes too, the
row is read by nothing the puzzle asks about and the probe is equivalent (allowed, saying so); when only the small
probe passes, a target tolerates a wrong write of that size, and the audit reports it to the author.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

WRITERS = ("W_V", "W_O", "W_out", "W_U")  # answer matrices whose entries reach a readout linearly
MAX_ROWS = 16  # rows probed per matrix; beyond, an even spread of them
SUFFIX = "(tolerance probe)"
LARGE = "(large twin)"


def size(puzzle) -> float:
    """The probe's bias: 1.5 × the smallest tolerance among the targets that have one, else 0.25 (a quarter logit
    or a quarter of a unit of attention-weighted value)."""
    tols = [float(t.tol) for t in puzzle.targets if isinstance(getattr(t, "tol", None), (int, float))]
    return 1.5 * min(tols) if tols else 0.25


def probes(attempt, numbers) -> Iterator[tuple[str, str, str, object]]:
    """(probe name, its large twin's name, answer name, (small matrix, large matrix)) for each probed row."""
    from circuits.checking.mutants import _labels, _with
    from circuits.model.weights import raw_array

    answer = attempt.answer
    delta = size(attempt.puzzle)
    for name in attempt.puzzle.answer:
        value = getattr(answer, name, None)
        if not name.startswith(WRITERS) or value is None or callable(value):
            continue
        raw = np.array(raw_array(value), dtype=object)  # symbols kept: the probe must not unbind the sharpness
        try:
            magnitude = np.abs(np.asarray(raw_array(numbers(name, value, getattr(answer, "params", None))), dtype=float))
        except (TypeError, ValueError):
            continue  # not all numbers once bound: the other mutants cover it
        if raw.ndim != 2:
            continue
        rows, _ = _labels(value, raw.shape)
        big = 10 * max(1.0, float(magnitude.max()))
        picked = range(raw.shape[0]) if raw.shape[0] <= MAX_ROWS else np.linspace(0, raw.shape[0] - 1, MAX_ROWS).astype(int)
        for r in dict.fromkeys(int(r) for r in picked):
            small, large = raw.copy(), raw.copy()
            small[r] += delta
            large[r] += big
            yield (f"{name}[{rows[r]}, :] + {delta:g} {SUFFIX}", f"{name}[{rows[r]}, :] + {big:g} {LARGE}", name,
                   (_with(value, small), _with(value, large)))
