"""The words of what a structure or code target found: its rows (OV measurements) and its finding.

One function per kind of facts; the targets in checking/targets/ and checking/reference.py hold the numbers, and
nothing here computes a finding. A str is a puzzle's own words (a Structure's row label, an instructor's compare),
printed as written.
"""

from __future__ import annotations

from circuits.checking.targets.ov import CopyingScore, RaisedMost, ScoreBound
from circuits.checking.targets.structure import MatrixDiffers

FINDINGS: dict = {}  # type of a finding's (or a row's) facts → its words


def words(facts) -> str:
    """The words for one finding or row: a str as written (the puzzle's own), facts by their kind's function."""
    return facts if isinstance(facts, str) else FINDINGS[type(facts)](facts)


def expected_matrix(expected):
    """A structure row's expected side as a sympy matrix: a matrix as it is, a bound as the one symbol that says it."""
    import sympy

    return sympy.Matrix([[sympy.Symbol(words(expected))]]) if type(expected) in FINDINGS else expected


# --- structure and OV circuits -----------------------------------------------------------------------------------
def _head(head) -> str:
    return f"head {head[0]}.{head[1]}"


def _score_bound(f: ScoreBound) -> str:
    return " and ".join(b.replace("-", "−") for b in (
        f"≥ {f.min_score:g}" if f.min_score is not None else "",
        f"≤ {f.max_score:g}" if f.max_score is not None else "") if b)


def _copying_score(f: CopyingScore) -> str:
    return f"{_head(f.head)}'s copying score Σλ/Σ|λ| of W_U W_OV W_E is {f.score:.3f} (needs {_score_bound(f.bound)})"


def _raised_most(f: RaisedMost) -> str:
    wrong = [f"{t} → {y}" for t, y in f.wrong]
    return (f"the token each attended token raises most through {_head(f.head)}'s W_U W_OV W_E"
            + (f" (wrong: {', '.join(wrong[:4])}{' …' if len(wrong) > 4 else ''})" if wrong else ""))


def _matrix_differs(f: MatrixDiffers) -> str:
    return f"{words(f.what)} differs from the expected matrix"


FINDINGS.update({ScoreBound: _score_bound, CopyingScore: _copying_score, RaisedMost: _raised_most,
                 MatrixDiffers: _matrix_differs})
