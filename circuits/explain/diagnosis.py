"""Why a readout is wrong: whether an attention pattern could give it (and where the attention leaks), which
head wrote a direction, and numbers shown with enough digits to see a gap. Used by the targets' explanations."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.model.decompose import decompose_resid


# --- numbers with enough digits --------------------------------------------------------------------------------
def apart(x: float, bound: float, decimals: int = 3) -> tuple[str, str]:
    """`x` and `bound` with the fewest decimals (at least `decimals`) that print them differently."""
    for d in range(decimals, 13):
        a, b = f"{x:.{d}f}", f"{bound:.{d}f}"
        if a != b:
            return a, (b.rstrip("0").rstrip(".") if d == decimals else b)
    return f"{x!r}", f"{bound!r}"


def factor(x: float) -> str:
    """A factor above 1 with enough digits that it does not print as ×1."""
    for d in range(3, 13):
        s = f"{x:.{d}g}"
        if float(s) != 1.0 or x == 1.0:
            return s
    return repr(x)


def tied(a: float, b: float) -> bool:
    """Two scores equal up to rounding: a softmax cannot tell them apart at any scale."""
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))  # float32 scores and sympy floats carry noise


def largest(weights: np.ndarray, wanted) -> int:
    """The key with the largest weight; of keys tied for it, one that is not wanted (a wanted key tied with a rival is
    not where the attention went wrong, and a summary naming it would say the attention went right)."""
    top = np.flatnonzero(weights == weights.max())
    return int(next((k for k in top if int(k) not in wanted), top[0]))


# --- could an attention pattern give the expected vector? ------------------------------------------------------
def _project_simplex(v: np.ndarray) -> np.ndarray:
    """The nearest point of the probability simplex to `v` `[n]` (Duchi et al. 2008)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.flatnonzero(u - css / np.arange(1, len(v) + 1) > 0)[-1]
    return np.maximum(v - css[k] / (k + 1), 0.0)


def nearest_mix(values: np.ndarray, expected: np.ndarray, start: np.ndarray, steps: int = 400) -> np.ndarray:
    """Weights `[n]` on the simplex, from `start`, whose mix of `values` `[n, k]` is nearest to `expected` `[k]`."""
    V = np.asarray(values, dtype=float)
    L = 2.0 * max(float(np.linalg.norm(V, 2)) ** 2, 1e-12)
    p = y = _project_simplex(np.asarray(start, dtype=float))
    t = 1.0
    for _ in range(steps):  # FISTA: accelerated projected gradient on ‖Vᵀp − e‖²
        grad = 2.0 * V @ (V.T @ y - expected)
        nxt = _project_simplex(y - grad / L)
        t_next = (1 + np.sqrt(1 + 4 * t * t)) / 2
        y = nxt + (t - 1) / t_next * (nxt - p)
        p, t = nxt, t_next
    return p


@dataclass
class Mix:
    """Keys grouped by their value: each group's keys, value, the mass yours puts there and the mass a fit needs."""

    keys: list[list[int]]
    values: list[np.ndarray]
    yours: np.ndarray
    needed: np.ndarray
    reachable: bool


def mix(pattern: np.ndarray, values: np.ndarray, expected: np.ndarray, tol: float) -> Mix:
    """Whether some attention over these keys gives `expected` (within `tol`), with keys grouped by equal value.

    pattern `[n]` (one query's weights), values `[n, k]` (what each key would give alone), expected `[k]`."""
    rounded = np.round(np.asarray(values, dtype=float), 9)
    groups: dict[bytes, list[int]] = {}
    for j, v in enumerate(rounded):
        groups.setdefault(v.tobytes(), []).append(j)
    keys = list(groups.values())
    vals = np.array([values[g[0]] for g in keys], dtype=float)  # [groups, k]
    yours = np.array([float(pattern[g].sum()) for g in keys])
    needed = nearest_mix(vals, expected, yours)
    reachable = bool(np.abs(needed @ vals - expected).max() <= tol)
    return Mix(keys, list(vals), yours, needed, reachable)


# --- who wrote a direction -------------------------------------------------------------------------------------
def writers(trace, layer: int, positions: list[int], directions: list[int]) -> dict[tuple, float]:
    """How much each part before `layer` (the embedding, each head, each MLP: ("embedding",), ("head", l, h),
    ("mlp", l)) wrote into `directions` at `positions` of input 0, as the sum of absolute values: the parts a
    reader at `layer` sees there."""
    return {
        part: float(np.abs(added[0][np.ix_(positions, directions)]).sum())
        for part, added in decompose_resid(trace, layer).items()
    }


def _suffix(label: str) -> str:
    return label.partition(":")[2] if ":" in label else label


def matched(M: np.ndarray, rows: list[str], cols: list[str]) -> float | None:
    """The share of a matrix's weight that pairs directions of one name (tok:a with prev:a), positively.

    A hand-written circuit matches like with like; a stray, or negated, entry lowers the share. None when
    the matrix pairs no names at all (a rotation of positions, say): the share says nothing then."""
    M = np.asarray(M, dtype=float)
    total = float(np.abs(M).sum())
    if total <= 1e-12:
        return None
    same = np.array([[_suffix(r) == _suffix(c) and ":" in r and ":" in c for c in cols] for r in rows])
    if not same.any():
        return None
    return float(np.where(same & (M > 0), M, 0.0).sum() / total)
