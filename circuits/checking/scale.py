"""A true scale: a puzzle's sharpness symbol (or matrix) is one factor on every score the learner writes, and raising
it only sharpens what the answer already does. Two shortcuts a live sharpness (guarantees.dead_sharpness) lets through:

- the scale baked into the numbers, s on one row or one head only: those scores stay as they are while s grows, so
  "s can shrink to 0.15×" describes a knob, not a scale, and a larger s can break the answer;
- s cancelled in every score (W_Q = s·A, W_K = B/s): the attention does not change with s at all.

Homogeneity is checked exactly (sympy, in weights.powers) where the answer's entries are symbolic and numerically on
the models built at several factors; the range by the behaviour targets at 3×, 10× and 100× the bound value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from circuits import limits
from circuits.errors import CircuitError
from circuits.targets.base import Kind

FACTORS = (3.0, 10.0, 100.0)  # a scale must hold from its margin up to at least 100× the bound value
RTOL = 1e-9  # a head's scores at c× the sharpness equal c × its scores up to this, relative to their largest entry
# (binding symbols to floats rounds at ~1e-16 of it: anything above is a term that does not scale)


# --- which scores must scale --------------------------------------------------------------------------------------
def attention_names(attempt, heads: dict) -> list[str]:
    """The declared sharpness names that the answer writes a head's scores with: its W_Q or W_K answer matrices
    named as the sharpness, or symbols used in them (`heads`: answer_names.head_matrices)."""
    from circuits.model.weights import symbols_in

    qk = {name for (_, _, role), name in heads.items() if role in ("W_Q", "W_K")}
    used = set().union(*(symbols_in(getattr(attempt.answer, n, None)) for n in qk)) if qk else set()
    return [str(n) for n in attempt.puzzle.sharpness if str(n) in qk or str(n) in used]


def _scored(model) -> list[tuple[int, int]]:
    """The heads whose pattern comes from their scores (not a fixed pattern)."""
    return [(l, h) for l in range(model.n_layers) for h in range(model.n_heads(l)) if model.head(l, h).pattern is None]


def scores(head) -> np.ndarray:  # -> [d_model + 1, d_model]
    """What a head's scores across keys depend on: W_Q^T W_K and the query bias's row b_Q^T W_K, times its scale
    (q·k's other terms are the same for every key, and softmax ignores them)."""
    return head.scale * np.vstack([head.W_Q.T @ head.W_K, head.b_Q @ head.W_K])


# --- one side of a head's scores ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Side:
    """A head's W_Q or W_K split by the power of the sharpness in each entry, with what a message names it by."""

    name: str  # the answer's name (W_Q1), or "head 1.0's W_K" for a given
    rows: Sequence[str]
    cols: Sequence[str]
    raw: np.ndarray  # the entries as written
    parts: dict  # power -> [d_head, d_model]
    stray: tuple | None = None  # an entry that is no number times a power of the sharpness
    learner: bool = True

    def at(self, r: int, c: int) -> str:
        """ "[0, first:a]": an entry by its row and column labels."""
        return f"[{self.rows[r]}, {self.cols[c]}]"

    def entry(self, r: int, c: int) -> str:
        """The entry as written: "s/2", "20/s", "20"."""
        x = self.raw[r, c]
        text = str(x) if getattr(x, "free_symbols", None) else f"{float(x):g}"
        return text if len(text) <= 30 else text[:29] + "…"

    def carrier(self) -> tuple[int, int] | None:
        """An entry with a positive power of the sharpness, if any."""
        for k, part in sorted(self.parts.items()):
            if k > 0 and part.any():
                return tuple(int(i) for i in np.argwhere(part)[0])
        return None


def _side(attempt, model, l: int, h: int, role: str, name: str | None, names: list[str]) -> Side | None:
    """`role` of head l.h, split by power: exactly from the answer's entries, or a given's numbers (power 0); None
    when the answer's matrix is not the head's as it stands (build() reshaped it)."""
    from circuits.model.weights import powers, raw_array

    built = getattr(model.head(l, h), role)
    labels = model.residual.labels
    cols = labels if built.shape[1] == len(labels) else [str(c) for c in range(built.shape[1])]
    if name is None:
        return Side(
            f"head {l}.{h}'s {role}", [str(r) for r in range(built.shape[0])], cols, built, {0.0: built}, learner=False
        )
    value = getattr(attempt.answer, name)
    rows = getattr(getattr(value, "rows", None), "labels", None) or [str(r) for r in range(built.shape[0])]
    split = powers(value, names, getattr(attempt.answer, "params", None))
    if any(p.shape != built.shape for p in split.parts.values()):
        return None
    parts = {k + 1 if name in names else k: p for k, p in split.parts.items()}  # a sharpness matrix: power 1 itself
    return Side(name, [str(r) for r in rows], cols, np.asarray(raw_array(value)), parts, split.stray)


# --- homogeneity: every score proportional to the sharpness --------------------------------------------------------
def _advice(names: str) -> str:
    """The end of every homogeneity line: what it means, and what to write instead."""
    return f"so {names} is not a scale — write {names} into the scores once, as a factor"


def _power(word: str, k: float) -> str:
    """s², s³, s^0.5: a power as a message says it."""
    sup = {2: "²", 3: "³"}
    return f"{word}{sup[int(k)]}" if k in sup else f"{word}^{k:g}"


def _change(k: float, head: str, names: str, every: bool) -> str:
    """What the scores of power `k` in the sharpness do as it grows ("every score of head 0.0 stays the same")."""
    if k == 0:
        verb = "stays the same" if every else "stay the same"
    elif k < 0:
        verb = "shrinks" if every else "shrink"
    else:
        return (
            f"{'every score' if every else 'those scores'} of {head} grow{'s' if every else ''} as {_power(names, k)}"
        )
    return f"{'every score' if every else 'those scores'} of {head} {verb} as {names} grows"


def _not_carried(head: str, names: str, Q: Side, K: Side, r: int, cq: int, ck: int) -> str:
    """A row with no sharpness on either side: blame the side that carries it elsewhere, else the whole head."""
    for side, c in ((Q, cq), (K, ck)):
        if side.learner and (other := side.carrier()) is not None:
            return (
                f"{side.name} has {side.entry(r, c)} at {side.at(r, c)}, without {names} (as {side.at(*other)} "
                f"has it): those scores of {head} stay the same as {names} grows, {_advice(names)}"
            )
    hold = " and ".join(s.name for s in (Q, K) if s.learner)
    return (
        f"{head}'s scores do not grow with {names} ({hold} hold{'s' if ' and ' not in hold else ''} no {names}): "
        f"its attention stays as sharp as its numbers make it, so {names} is not a scale — write {names} into "
        f"the scores of every head you write, as one factor"
    )


def _first_row(Qa: np.ndarray, Kb: np.ndarray) -> tuple[int, int, int]:
    """The first row where both sides have an entry, and the first entry of each in it."""
    r = int(np.flatnonzero(Qa.any(1) & Kb.any(1))[0])
    return r, int(np.flatnonzero(Qa[r])[0]), int(np.flatnonzero(Kb[r])[0])


def culprit(head: str, Q: Side, K: Side, names: str) -> str | None:
    """One line naming the entries that keep `head`'s scores from being proportional to `names`; None when they are."""
    for side in (Q, K):
        if side.stray is not None:
            r, c = side.stray
            return (
                f"{side.name} has {side.entry(r, c)} at {side.at(r, c)}, which is not a number times a power of "
                f"{names}: {head}'s scores do not grow in proportion to {names}, {_advice(names)}"
            )
    by_power: dict[float, np.ndarray] = {}
    for a, Qa in Q.parts.items():
        for b, Kb in K.parts.items():
            by_power[a + b] = by_power.get(a + b, 0) + Qa.T @ Kb
    top = max((float(np.abs(m).max()) for m in by_power.values()), default=0.0)
    wrong = [k for k, m in by_power.items() if k != 1 and np.abs(m).max() > RTOL * top]
    if not wrong:
        return None
    k = max(wrong, key=lambda k: np.abs(by_power[k]).max())
    a, b = next((a, b) for a in Q.parts for b in K.parts if a + b == k and np.abs(Q.parts[a].T @ K.parts[b]).max() > 0)
    r, cq, ck = _first_row(Q.parts[a], K.parts[b])
    change = _change(k, head, names, every=np.abs(by_power.get(1.0, 0)).max() <= RTOL * top)
    if a < 0 or b < 0:
        side, c, p = (Q, cq, a) if a < 0 else (K, ck, b)
        by = names if p == -1 else _power(names, -p)
        return f"{side.name} divides by {by} (entry {side.at(r, c)} = {side.entry(r, c)}): {change}, {_advice(names)}"
    if k == 0:
        return _not_carried(head, names, Q, K, r, cq, ck)
    said = " and ".join(f"{s.name} has {s.entry(r, c)} at {s.at(r, c)}" for s, c, p in ((Q, cq, a), (K, ck, b)) if p)
    return f"{said}: {change}, {_advice(names)}"


def _scales_itself(head, names: list[str]) -> bool:
    from circuits.model.weights import symbols_in

    own = head.source.scale
    return own is not None and not isinstance(own, str) and bool(symbols_in([own]) & set(names))


def homogeneity(attempt, model, heads: dict, names: list[str]) -> str | None:
    """The first head the learner writes whose scores are not proportional to the sharpness `names` (exactly,
    from the answer's entries), said in one line; None when every one is."""
    word = " and ".join(names)
    for l, h in _scored(model):
        q, k = heads.get((l, h, "W_Q")), heads.get((l, h, "W_K"))
        if q is None and k is None:
            continue  # a given: not the learner's to scale
        if not np.abs(scores(model.head(l, h))).any():
            continue  # no score at all: a uniform pattern has nothing to sharpen
        if _scales_itself(model.head(l, h), names):
            continue  # the head's own scale= holds the sharpness: the numeric check (proportional) judges it
        Q, K = (_side(attempt, model, l, h, role, n, names) for role, n in (("W_Q", q), ("W_K", k)))
        if Q is None or K is None:
            continue  # build() reshaped the answer's matrix: the numeric check (proportional) judges this head
        if (said := culprit(f"head {l}.{h}", Q, K, word)) is not None:
            return said
    return None


def proportional(model, scaled_models: dict, heads: dict, names: list[str]) -> str | None:
    """The numeric twin of homogeneity: every head's scores in the models built at c× the sharpness are c × its own
    (a given's may also stay the same); one line for the first that is neither."""
    word = " and ".join(names)
    for l, h in _scored(model):
        ours = heads.get((l, h, "W_Q")) or heads.get((l, h, "W_K"))
        base = scores(model.head(l, h))
        top = float(np.abs(base).max())
        for c, other in scaled_models.items():
            at = scores(other.head(l, h))
            if np.abs(at - c * base).max() <= RTOL * c * top:
                continue
            if ours is None and np.abs(at - base).max() <= RTOL * top:
                continue
            i, j = np.unravel_index(int(np.argmax(np.abs(at - c * base))), base.shape)
            labels = model.residual.labels
            where = f"W_Qᵀ W_K at [{labels[i]}, {labels[j]}]" if i < len(labels) else f"b_Qᵀ W_K at {labels[j]}"
            return (
                f"head {l}.{h}'s scores do not grow in proportion to {word}: {where} is "
                f"{base[i, j]:.4g} with yours and {at[i, j]:.4g} at {c:g}× (not {c * base[i, j]:.4g}), "
                f"{_advice(word)}"
            )
    return None


# --- the range: a larger sharpness only sharpens -------------------------------------------------------------------
def _at(attempt, c: float) -> str:
    """ "s = 60" (or "s = 60, γ = 30", "3× your W_Q"): the puzzle's sharpness at c× the answer's."""
    params = {str(k): v for k, v in dict(getattr(attempt.answer, "params", None) or {}).items()}
    names = map(str, attempt.puzzle.sharpness)
    return ", ".join(f"{n} = {float(params[n]) * c:g}" if n in params else f"{c:g}× your {n}" for n in names)


def at_factors(attempt) -> dict:
    """The answer's model at each of FACTORS × its sharpness (all the puzzle's names together, as margins scale
    them), or the one line saying at which it cannot be built."""
    from circuits.checking.margins import scaled

    models = {}
    for c in FACTORS:
        try:
            models[c] = attempt.model(scaled(attempt.answer, attempt.puzzle.sharpness, c))
        except CircuitError as e:
            raise CircuitError(f"at {_at(attempt, c)} ({c:g}× yours) your answer cannot be built: {e}") from None
    return models


def holds_range(attempt, models: dict, batch: list, evaluate) -> str | None:
    """One line for the smallest factor at which a behaviour target fails on `batch` (the target first in the
    puzzle, on the shortest input); None when every factor passes. Where an answer matrix carries the sharpness
    on some entries and not on another, the line names that entry first (partly_scaled)."""
    targets = [t for t in attempt.puzzle.targets if t.kind is Kind.BEHAVIOUR]
    names = " and ".join(map(str, attempt.puzzle.sharpness))
    for c, model in models.items():
        ok, _ = evaluate(model, targets, batch)
        if ok.all():
            continue
        t = int(np.flatnonzero(~ok.all(1))[0])
        j = min(np.flatnonzero(~ok[t]), key=lambda j: (len(batch[j]), j))
        fails = (
            f"at {_at(attempt, c)} ({c:g}× yours) target {limits.quoted(targets[t].label)} fails on "
            f"{limits.shown_input(batch[j])}"
        )
        if (entry := partly_scaled(attempt)) is not None:
            said, matrix = entry
            return f"{said}: {fails}, so {names} is not a scale — write it into all of {matrix}, as one factor"
        return (
            f"{fails} (the shortest input it fails on), so {names} is not a scale that only sharpens: what your "
            f"answer gets right must not depend on {names} staying small"
        )
    return None


def partly_scaled(attempt) -> tuple[str, str] | None:
    """The first answer matrix that carries the puzzle's sharpness on some entries but not on another non-zero
    one (γ on W_O's out:x entry, a bare 10 on its out:y one), said as "W_O has 10 at [out:y, 1], without γ (as
    [out:x, 0] has it)", and the matrix's name; None when every matrix carries it on all its entries or on none."""
    from circuits.model.weights import powers, raw_array, symbols_in

    names = [str(n) for n in attempt.puzzle.sharpness]
    params = getattr(attempt.answer, "params", None)
    for name in attempt.puzzle.answer:
        value = getattr(attempt.answer, name, None)
        if name == "params" or name in names or value is None or callable(value):
            continue
        try:
            split = powers(value, names, params)
        except Exception:  # noqa: BLE001 - a value the builder rejects is judged by the build, not here
            continue
        bare = split.parts.get(0.0)
        if bare is None or not np.abs(bare).any() or not any(k > 0 and p.any() for k, p in split.parts.items()):
            continue
        rows, cols = (getattr(getattr(value, side, None), "labels", None) for side in ("rows", "cols"))
        raw = np.asarray(raw_array(value))
        side = Side(
            name,
            rows or [str(r) for r in range(raw.shape[0])],
            cols or [str(c) for c in range(raw.shape[1])],
            raw,
            split.parts,
        )
        r, c = (int(i) for i in np.argwhere(np.abs(bare) > 0)[0])
        word = " and ".join(n for n in names if n in symbols_in(value))
        return (
            f"{name} has {side.entry(r, c)} at {side.at(r, c)}, without {word} (as {side.at(*side.carrier())} has it)",
            name,
        )
    return None


def not_a_scale(attempt, model, batch: list, evaluate, meant: Sequence[str] = ()) -> str | None:
    """One line saying why the puzzle's sharpness is not a true scale of this (passing) answer, None when it is:
    every head the learner writes scores proportionally to it (`meant`: the names the puzzle's reference writes its
    scores with, needed even where this answer writes them with none), and every target holds at 3×–100× of it."""
    from circuits.checking.answer_names import head_matrices

    puzzle = attempt.puzzle
    if not puzzle.sharpness or model is None or not batch or not any(t.kind is Kind.BEHAVIOUR for t in puzzle.targets):
        return None
    heads = head_matrices(attempt, model)
    names = list(dict.fromkeys([*attention_names(attempt, heads), *meant]))
    try:
        models = at_factors(attempt)
    except CircuitError as e:
        return str(e)
    if names and (
        (said := homogeneity(attempt, model, heads, names)) or (said := proportional(model, models, heads, names))
    ):
        return said
    return holds_range(attempt, models, batch, evaluate)
