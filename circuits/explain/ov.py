"""OV circuit's words: a head's copying score and its bound, and the token each attended token raises most.

The facts are measured where the check runs (targets/ov.py); here they are said.
"""

from __future__ import annotations

from circuits.explain.structure import head
from circuits.explain.tables import words
from circuits.targets.ov import CopyingScore, RaisedMost, ScoreBound


@words.register
def _(f: ScoreBound) -> str:
    return " and ".join(
        b.replace("-", "−")
        for b in (
            f"≥ {f.min_score:g}" if f.min_score is not None else "",
            f"≤ {f.max_score:g}" if f.max_score is not None else "",
        )
        if b
    )


@words.register
def _(f: CopyingScore) -> str:
    return f"{head(f.head)}'s copying score Σλ/Σ|λ| of W_U W_OV W_E is {f.score:.3f} (needs {words(f.bound)})"


@words.register
def _(f: RaisedMost) -> str:
    wrong = [f"{t} → {y}" for t, y in f.wrong]
    return f"the token each attended token raises most through {head(f.head)}'s W_U W_OV W_E" + (
        f" (wrong: {', '.join(wrong[:4])}{' …' if len(wrong) > 4 else ''})" if wrong else ""
    )
