"""What raising a puzzle's sharpness does for a failing target: the factor that makes it pass at every length the
puzzle promises (the failing input at its full length, the worked examples, the small and the random inputs), not
only on the shrunk input the report shows."""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

from circuits.checking.evaluation import evaluate
from circuits.errors import CircuitError
from circuits.explain.scores import ScaleBy
from circuits.targets import Kind

TOP = 1e4  # beyond this a factor is no advice: something other than the scale is wrong


@dataclass(frozen=True)
class Sharpening:
    """Raising the puzzle's sharpness `names` by ×`factor` (rounded up) makes the failing target pass on every input
    checked, at every length up to `max_len`; a note on the hint when the hint itself carries no factor."""

    factor: float
    names: tuple[str, ...]
    max_len: int
    of: str = "attention"  # whose sharpness: "attention" | "prediction"


@dataclass(frozen=True)
class NotAScale:
    """Raising the puzzle's sharpness does not raise the scores the hint says need raising: `detail`, the line that
    says which entries keep them from growing with it (W_Q = s·A with W_K = B/s: s cancels)."""

    detail: str


def rounded_up(x: float, digits: int = 3) -> float:
    """`x` rounded up to `digits` significant digits: a factor said must never fall short of the one found."""
    if x <= 0:
        return x
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return round(math.ceil(x / step - 1e-9) * step, 12)


def sample(pool: list, longest: int = 1000, spread: int = 500) -> list:
    """The inputs a factor is sized on, of those the check tried: the longest (where a softmax dilutes most) and a
    spread over the rest, so that sizing costs a few evaluations of ~1,500 inputs, not of every one."""
    if len(pool) <= longest + spread:
        return list(pool)
    by_len = sorted(range(len(pool)), key=lambda i: -len(pool[i]))
    picked = set(by_len[:longest]) | set(range(0, len(pool), max(1, len(pool) // spread)))
    return [pool[i] for i in sorted(picked)]


def factor(attempt, target, names, batch: list, evaluate, steps: int = 7) -> float | None:
    """The smallest factor (≥ 1, rounded up) on the sharpness `names` (of the puzzle's) at which `target` passes
    every input in `batch`; None when the puzzle declares none, the answer does not use it, or not even ×10⁴ is
    enough."""
    from circuits.checking.margins import scaled
    from circuits.checking.validate import undeclared_sharpness

    if not names or undeclared_sharpness(attempt) or not batch:
        return None
    hard: list = []  # inputs that failed at a smaller factor: tried first, alone

    def ok(f: float) -> bool:
        try:
            model = attempt.model(scaled(attempt.answer, names, f))
        except CircuitError:
            return False
        for part in (hard, batch):
            if not part:
                continue
            good = evaluate(model, [target], part)[0][0]
            if not good.all():
                hard.append(part[int((~good).argmax())])
                return False
        return True

    if not ok(TOP):
        return None
    hi = 2.0
    while not ok(hi):
        hi *= 2
    lo = hi / 2
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return rounded_up(hi)


def sizing(attempt, target, hint, terms, batch: list, evaluate, max_len: int) -> Sharpening | None:
    """What raising one sharpness alone does for the failing `target`: the attention's first where the hint is about
    the attention (it names a factor, or a head), else the prediction's; None when neither alone fixes it."""
    if not attempt.puzzle.sharpness or terms is None:
        return None
    said = terms.sharpness
    order = ("attention", "prediction") if holds_scale(hint) or not target.reads_logits else ("prediction", "attention")
    tried: list = []
    for what in order:
        names = tuple(said.get(what, ()))
        if not names or names in tried:
            continue
        tried.append(names)
        by = factor(attempt, target, names, batch, evaluate)
        if by is not None:
            return Sharpening(by, names, max_len, what)
    return None


def sized(hint, sharpening: Sharpening):
    """The hint's facts with every ScaleBy in them sized by `sharpening` (the same hint when it holds none)."""
    return _each_scale(hint, lambda s: dataclasses.replace(s, factor=sharpening.factor, max_len=sharpening.max_len))


def unscaled(hint, note: NotAScale):
    """The hint's facts with every ScaleBy in them saying why the sharpness does not raise its scores."""
    return _each_scale(hint, lambda s: dataclasses.replace(s, unscaled=note.detail))


def _each_scale(hint, change):
    """The hint's facts with `change` applied to every ScaleBy in them (the same hint when it holds none)."""
    if isinstance(hint, ScaleBy):
        return change(hint)
    if not dataclasses.is_dataclass(hint) or isinstance(hint, type):
        return hint
    changed = {f.name: _each_scale(getattr(hint, f.name), change) for f in dataclasses.fields(hint)}
    if all(changed[k] is getattr(hint, k) for k in changed):
        return hint
    return dataclasses.replace(hint, **changed)


def holds_scale(hint) -> bool:
    """Whether the hint's facts carry a ScaleBy (a factor said in the hint itself)."""
    if isinstance(hint, ScaleBy):
        return True
    if not dataclasses.is_dataclass(hint) or isinstance(hint, type):
        return False
    return any(holds_scale(getattr(hint, f.name)) for f in dataclasses.fields(hint))


# --- sized for a failing target, and one factor for every target it fixes ----------------------------------------
def sharpenings(result) -> list:
    """The sharpening notes of a target's result (none where it did not fail with an explanation)."""
    if result.status != "failed" or result.failure.explanation is None:
        return []
    return [n for n in result.failure.explanation.notes if isinstance(n, Sharpening)]


def one_factor(results: list) -> None:
    """Where one sharpness alone fixes several failing targets, every one of them says the largest factor: the one
    that makes them all pass (following a smaller one would leave the others failing)."""
    notes = [n for r in results for n in sharpenings(r)]
    most = {}
    for n in notes:
        most[n.names] = max(most.get(n.names, n.factor), n.factor)
    for r in results:
        e = r.failure.explanation if r.status == "failed" else None
        if e is not None:
            e.notes = [
                dataclasses.replace(n, factor=most[n.names]) if isinstance(n, Sharpening) else n for n in e.notes
            ]


def size_sharpening(attempt, target, f, batch: list, max_len: int) -> None:
    """Where raising the puzzle's sharpness alone fixes the failing target, say by how much for every input checked
    (the failing one at its full length included): in the hint's own factor, else as a note after it."""
    e = f.explanation
    said = sizing(attempt, target, e.hint, e.terms, [f.tokens, *batch], evaluate, max_len)
    if said is not None:
        said = mechanisms_hold_too(attempt, said)
        e.notes.append(said)  # display says it in the hint's own factor where the hint names one
    elif holds_scale(e.hint) and (unscaled := not_scaling(attempt, e.head)) is not None:
        e.notes.append(NotAScale(unscaled))  # "raise s by that much" would be false: say why s raises nothing


def not_scaling(attempt, at: tuple[int, int] | None = None) -> str | None:
    """Why raising the sharpness of the attention does not raise the scores of the head `at` (or, where its scores
    do scale, of another head the learner writes): exactly, from the answer's entries, else on the model built at
    2×; None when every one scales, or the answer cannot be built."""
    from circuits.checking.answer_names import head_matrices
    from circuits.checking.margins import scaled
    from circuits.checking.scale import attention_names, homogeneity, proportional

    try:
        model = attempt.model()
        heads = head_matrices(attempt, model)
        names = attention_names(attempt, heads)
        if not names:
            return None
        doubled = attempt.model(scaled(attempt.answer, names, 2.0))
        own = {k: v for k, v in heads.items() if k[:2] == at}
        return next(
            (
                said
                for these in ((own, heads) if own else (heads,))
                if (
                    said := homogeneity(attempt, model, these, names)
                    or proportional(model, {2.0: doubled}, these, names)
                )
            ),
            None,
        )
    except CircuitError:
        return None


def mechanisms_hold_too(attempt, said):
    """The factor raised until the puzzle's mechanism targets pass too (×1.25 a step, then narrowed to within 3 %):
    a patched input can need more sharpness than the behaviour's own, and a factor said must fix what it names
    without a new failure."""
    from circuits.checking.checker import check_mechanism
    from circuits.checking.margins import scaled

    mechanisms = [t for t in attempt.puzzle.targets if t.kind is Kind.MECHANISM]

    def holds(factor: float) -> bool:
        trial = copy.copy(attempt)
        trial.answer = scaled(attempt.answer, said.names, factor)
        model = trial.model()
        return all(check_mechanism(t, trial, model).status == "passed" for t in mechanisms)

    try:
        if not mechanisms or holds(said.factor):
            return said
        low, high = said.factor, said.factor * 1.25
        while not holds(high):
            if high > TOP:
                return said
            low, high = high, high * 1.25
        for _ in range(3):
            mid = (low * high) ** 0.5
            low, high = (low, mid) if holds(mid) else (mid, high)
    except CircuitError:
        return said
    return dataclasses.replace(said, factor=rounded_up(high))
