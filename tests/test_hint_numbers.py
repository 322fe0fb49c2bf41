"""Every number a hint quotes is true: it appears in the puzzle's worksheet or givens, or it is recomputed here.

A hint ladder lives apart from the worksheet it helps with (hints.toml), so a rewritten worksheet can leave a hint
quoting a number the learner no longer sees (06's hints said "well below 2.7" after its worksheet stopped showing
the table that gave 2.7). A number counts as shown when the reference file, up to its answer line (the docstring,
the givens and the Puzzle's targets and inputs), holds the same value at the precision the hint quotes. The others
are derived claims: each is recomputed below from the puzzle's own givens, so a hint that drifts fails here.
"""

import math
import re

import numpy as np
import pytest
from helpers import SOLUTIONS, STEMS, solution

from circuits.checking import curriculum

NUMBER = re.compile(r"(?<![\w.·^])[−-]?(?:\d+(?:\.\d+)?|\.\d+)(?!\d)")
PUZZLE_REF = re.compile(r"\bpuzzles? \d\d\b")  # "puzzle 04's rotation" names a puzzle, it quotes no number


def value(text: str) -> float:
    return float(text.replace("−", "-"))


def decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def quoted(hint: str) -> list[str]:
    """The numbers a hint quotes, as written."""
    return NUMBER.findall(PUZZLE_REF.sub("", hint))


def shown(stem: str) -> set[float]:
    """Every number the learner can read in the puzzle: the reference file above its answer line."""
    text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8").split("# ── your answer")[0]
    return {abs(value(n)) for n in NUMBER.findall(text)}


def _share(gap: float, rivals: int) -> float:
    """The softmax share of one key that leads `rivals` equal keys by `gap`."""
    return math.exp(gap) / (math.exp(gap) + rivals)


def _one_minus_tol(stem: str) -> float:
    (target,) = solution(stem).puzzle.targets
    return 1 - target.tol


def _successor_log_prob(gamma: float) -> float:
    """12: the rotated OV circuit's log-prob of digit 3's successor at sharpness γ (logits γ·cos((d − 4)·36°))."""
    logits = gamma * np.cos((np.arange(10) - 4) * 2 * np.pi / 10)
    return float(logits[4] - np.log(np.exp(logits).sum()))


def _gap_too_small() -> float:
    """02: "a gap of 5 is too small" — 5 if it is (position 0's share against 39 rivals below 0.9), else NaN."""
    rivals = solution("02_first_consonant").puzzle.inputs.max_len - 1
    return 5.0 if _share(5, rivals) < _one_minus_tol("02_first_consonant") else math.nan


# (stem, number as the hint writes it) -> the number recomputed from the puzzle: derived claims, not shown ones
DERIVED = {
    ("01_consonants", "39"): lambda: solution("01_consonants").puzzle.inputs.max_len - 1,  # the other keys at the end
    ("01_consonants", "0.9"): lambda: _one_minus_tol("01_consonants"),  # the consonant share the tolerance leaves
    ("02_first_consonant", "0.9"): lambda: _one_minus_tol("02_first_consonant"),
    ("02_first_consonant", "5"): _gap_too_small,
    ("12_successor_head", ".191"): lambda: 1 - math.cos(math.radians(36)),
    ("12_successor_head", "30"): lambda: 30,  # the hint's own choice of γ; its consequence is the next claim
    ("12_successor_head", "−0.0065"): lambda: _successor_log_prob(30),
    ("26_modular_addition", "0.905"): lambda: math.exp(-0.1),  # the probability a log-prob of −0.1 stands for
}


def unsupported(stem: str, hints: list[str]) -> list[str]:
    """The numbers in `hints` that the worksheet does not show and no derived claim recomputes to."""
    there, out = shown(stem), []
    for hint in hints:
        for number in quoted(hint):
            v = value(number)
            if any(round(x, decimals(number)) == abs(v) for x in there):
                continue
            claim = DERIVED.get((stem, number))
            if claim is None or not round(claim(), decimals(number)) == v:
                out.append(number)
    return out


@pytest.mark.parametrize("stem", STEMS)
def test_every_number_a_hint_quotes_is_shown_or_true(stem):
    hints = curriculum.hints(stem)
    assert hints, f"{stem} has no hint ladder"
    assert unsupported(stem, hints) == [], f"{stem}'s hints quote numbers the worksheet does not support"


def test_the_derived_claims_are_used():
    """A claim whose number no hint quotes any more is dead: drop it (or the hint lost a number it should keep)."""
    used = {(stem, n) for stem in STEMS for hint in curriculum.hints(stem) for n in quoted(hint)}
    assert set(DERIVED) <= used, set(DERIVED) - used


def test_a_stale_number_is_caught():
    """06's old third hint ("well below 2.7", from a table the rewritten worksheet no longer shows) is refused,
    and so is a derived claim gone wrong."""
    assert unsupported("06_induction_pointer", ["For β: try values well below 2.7."]) == ["2.7"]
    assert unsupported("12_successor_head", ["γ = 30 gives it log-prob ≈ −0.0075."]) == ["−0.0075"]
    assert unsupported("02_first_consonant", ["A gap of 9 is too small."]) == ["9"]
    assert quoted("puzzle 04's rotation, a gap of e^−0.1 ≈ .191γ, −1.38") == ["0.1", ".191", "−1.38"]


def test_06s_worst_pair_is_what_the_positions_give():
    """06's hint bounds β by the table's largest and smallest p_n·p_m at distances 1–15: recomputed from the givens."""
    ns = solution("06_induction_pointer").puzzle.build.__globals__
    alpha, lam = [float(a) for a in ns["ALPHA"][:2]], ns["MAGNITUDES"][:2]
    d = np.arange(1, ns["N_CTX"])
    p = sum(m * m * np.cos(a * d) for a, m in zip(alpha, lam))
    assert (round(p.max(), 2), int(d[p.argmax()])) == (0.84, 3)
    assert (round(p.min(), 2), int(d[p.argmin()])) == (-1.38, 7)
    hint = curriculum.hints("06_induction_pointer")[2]
    assert "(0.84, at 3)" in hint and "(−1.38, at 7)" in hint and "1 / (0.84 + 1.38)" in hint
    beta = solution("06_induction_pointer").answer.params["β"]
    assert beta < 1 / (0.84 + 1.38)  # the reference answer keeps to the bound the hint gives
