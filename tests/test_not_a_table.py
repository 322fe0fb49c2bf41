"""26 needs the idea, not a table (issue 35, item 5): the MLP may have at most 24 hidden units, and fed any two
angles by intervention it must write the cos and sin of their sum (PatchedMLP, MLPWidth).

Each wrong answer here is a shortcut a learner hunting one would try, and each fails with a one-line report naming
what is missing. The tables (of the pairs, or of one number) pass the old check, the 25 pairs' log-probs alone; the
others fail it too, and the new targets with it.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SOLUTIONS
from test_misconceptions import key_line, wrong

from circuits import MLPWidth, PatchedMLP
from circuits.checking.loader import load
from circuits.display.report import failure_line
from circuits.errors import CircuitError
from circuits.explain import check

STEM = "26_modular_addition"
WIDTH = "no table of the pairs: your MLP has at most 24 hidden units"
ANGLES = "your MLP adds any two angles, not only the tokens'"


@pytest.fixture(scope="module")
def reference():
    return load(SOLUTIONS / f"{STEM}.py")


def checked(attempt):
    return check(attempt, n_random=200, property_examples=10, margins=False)


def statuses(result) -> dict[str, str]:
    return {t.label.split(":")[0]: t.status for t in result.targets}


def features(g, t: float) -> tuple[float, float]:
    return np.cos(g["w"] * t), np.sin(g["w"] * t)


# ── the answers ───────────────────────────────────────────────────────────────────────────────────────────────────────
def table(threshold: float = 1.65, pairs: int = 25):
    """One unit per pair (a, b): it fires only there (a's and b's features both match, above the threshold on
    `one`) and writes the answer's cos and sin. A low threshold makes it soft: neighbours fire a little too."""

    def edit(answer, g):
        W_in, W_out = g["blank"](pairs, g["resid"]), g["blank"](g["resid"], pairs)
        for u in range(pairs):
            a, b = divmod(u, g["P"])
            (W_in[u, "prev:cos"], W_in[u, "prev:sin"]), (W_in[u, "tok:cos"], W_in[u, "tok:sin"]) = (
                features(g, a),
                features(g, b),
            )
            W_in[u, "one"] = -threshold
            W_out["sum:cos", u], W_out["sum:sin", u] = (v / (2 - threshold) for v in features(g, a + b))
        answer.W_in, answer.W_out = W_in, W_out

    return edit


def gated(on: str = "prev", sharpness: float = 5):
    """A table over one number only: per value a0 of a (`on` prev:) or of b (tok:), two units that fire when it
    is a0 and write the other number's features turned by a0 (exact on the 25 pairs); one unit takes back the
    1 each gate lets through."""
    other = {"prev": "tok", "tok": "prev"}[on]

    def edit(answer, g):
        P = g["P"]
        W_in, W_out = g["blank"](2 * P + 1, g["resid"]), g["blank"](g["resid"], 2 * P + 1)
        for a0 in range(P):
            c, s = features(g, a0)
            for k, (into, row) in enumerate((("sum:cos", (c, -s)), ("sum:sin", (s, c)))):
                u = 2 * a0 + k
                W_in[u, f"{on}:cos"], W_in[u, f"{on}:sin"] = sharpness * c, sharpness * s
                W_in[u, f"{other}:cos"], W_in[u, f"{other}:sin"] = row
                W_in[u, "one"] = 1 - sharpness  # the gate: sharpness · (cos(θ − w·a0) − 1), 0 at a0 only
                W_out[into, u] = 1
        W_in[2 * P, "one"] = 1
        W_out["sum:cos", 2 * P] = W_out["sum:sin", 2 * P] = -1
        answer.W_in, answer.W_out = W_in, W_out

    return edit


def sum_of_features(answer, g):
    """sum: as the sum of a's and b's features (relu(x) − relu(−x) copies x): adding the features, not the angles."""
    W_in, W_out = g["blank"](4, g["resid"]), g["blank"](g["resid"], 4)
    for u, (x, sign) in enumerate((("prev:cos", 1), ("prev:cos", -1), ("tok:cos", 1), ("tok:cos", -1))):
        W_in[u, x] = sign
        W_out["sum:cos", u] = sign
    answer.W_in, answer.W_out = W_in, W_out


def products_of_the_grid(answer, g):
    """Each product as one unit relu(x + y − 1) that fires only where both features are near 1: right at the
    tokens' angles where it matters for the readout's peak, a lookup of the largest products only."""
    W_in, W_out = g["blank"](4, g["resid"]), g["blank"](g["resid"], 4)
    for u, (x, y, into) in enumerate(
        (
            ("prev:cos", "tok:cos", "sum:cos"),
            ("prev:sin", "tok:sin", "sum:cos"),
            ("prev:sin", "tok:cos", "sum:sin"),
            ("prev:cos", "tok:sin", "sum:sin"),
        )
    ):
        W_in[u, x], W_in[u, y], W_in[u, "one"] = 1, 1, -1
        W_out[into, u] = -1 if (x, y) == ("prev:sin", "tok:sin") else 1
    answer.W_in, answer.W_out = W_in, W_out


# ── the lookup table of the issue ─────────────────────────────────────────────────────────────────────────────────
def test_the_lookup_table_passed_the_old_check(reference):
    """What the issue reports: the 25 pairs' log-probs alone do not tell the table from the idea."""
    result = checked(wrong(reference, table()))
    assert statuses(result)["after every pair a, b the answer (a + b) mod 5 has log-prob ≥ −0.1"] == "passed"


def test_the_lookup_table_fails_with_one_line_naming_what_is_missing(reference):
    result = checked(wrong(reference, table()))
    assert result.status == "failing"
    line = failure_line(next(t for t in result.targets if t.status == "failed"))
    assert "\n" not in line
    assert line == (
        "✗ no table of the pairs: your MLP has at most 24 hidden units, fewer than the 25 pairs: W_in of "
        "the MLP in layer 0 has shape (25, 7): d_mlp = 25 hidden units, at most 24 allowed"
    )
    angles = failure_line(next(t for t in result.targets if t.label.startswith(ANGLES)))
    assert "\n" not in angles and "it writes sum:cos 0, sum:sin 0, expected" in angles  # between the pairs: nothing


# ── shortcuts a learner would try next ─────────────────────────────────────────────────────────────────────────────
CASES = [  # (name, edit, what the key line says)
    ("a soft table of the 25 pairs: right between them too, but a unit per pair", table(threshold=1.2), WIDTH),
    (
        "a table of 24 pairs, one left out to fit the bound",
        table(pairs=24),
        "after position 1 '4' the expected next token has log-prob",
    ),
    (
        "a table over a alone, b's features turned by a's angle",
        gated("prev"),
        ANGLES + ": fed cos θ, sin θ in prev: and cos φ, sin φ in tok:, it writes",
    ),
    ("a table over b alone, a's features turned by b's angle", gated("tok"), ANGLES),
    ("a table over a with gates 10 times sharper", gated("prev", sharpness=10), "off by 2 (tolerance 0.5)"),
    ("sum: as the sum of the features, not of the angles", sum_of_features, "the expected next token has log-prob"),
    (
        "one unit per product, firing only where both features are near 1",
        products_of_the_grid,
        "the expected next token has log-prob",
    ),
]


@pytest.mark.parametrize("name, edit, expect", CASES, ids=[c[0] for c in CASES])
def test_a_shortcut_is_rejected(reference, name, edit, expect):
    result = checked(wrong(reference, edit))
    assert result.status == "failing", [(t.label, t.status) for t in result.targets]
    assert expect in key_line(result)


def test_a_table_over_one_number_passes_the_25_pairs_and_only_the_intervention_catches_it(reference):
    for edit in (gated("prev"), gated("tok")):
        result = checked(wrong(reference, edit))
        assert [t.status for t in result.targets] == ["passed", "passed", "failed"]


def test_the_soft_table_adds_angles_and_only_the_width_catches_it(reference):
    """A table soft enough to be right between the pairs is a smooth approximation: the bound on units is what
    keeps it out (it needs one per pair)."""
    result = checked(wrong(reference, table(threshold=1.2)))
    assert [t.status for t in result.targets] == ["passed", "failed", "passed"]


def test_the_reference_passes(reference):
    result = checked(reference)
    assert result.status == "solved", [(t.label, t.status) for t in result.targets]
    assert sum(isinstance(t, (MLPWidth, PatchedMLP)) for t in reference.puzzle.targets) == 2


# ── the two kinds, apart from 26 ──────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "make, said",
    [
        (lambda: PatchedMLP("adds", cases=None), "PatchedMLP('adds'): cases is None (NoneType); it needs a function"),
        (lambda: PatchedMLP("adds", cases=list, tol="0.5"), "PatchedMLP('adds'): tol is the string '0.5'"),
        (lambda: PatchedMLP("adds", cases=list, layer=-1), "PatchedMLP('adds'): layer is -1 (int)"),
        (lambda: MLPWidth("narrow", most=0), "MLPWidth('narrow'): most is 0 (int); it needs a whole number ≥ 1"),
    ],
)
def test_a_target_declared_wrong_is_one_line_naming_it(make, said):
    with pytest.raises(CircuitError) as e:
        make()
    assert str(e.value).startswith(said) and "\n" not in str(e.value)


def test_a_patched_mlp_reads_only_what_it_feeds(reference):
    """A case that feeds one direction: the MLP sees it alone (the others are 0, not the tokens')."""
    model = reference.model()
    target = PatchedMLP("x", cases=lambda: [("one alone", {"one": 1.0}, {"sum:cos": 0.0, "sum:sin": 0.0})], tol=1e-9)
    ((facts, _, _, ok),) = target.run(reference.answer, model)
    assert ok and facts.yours == (0.0, 0.0)  # the reference's units read no `one`: all off
    target = PatchedMLP("x", cases=lambda: [("a = b = 0", {"prev:cos": 1, "tok:cos": 1}, {"sum:cos": 0.0})], tol=0.1)
    ((facts, _, _, ok),) = target.run(reference.answer, model)
    assert not ok and facts.yours == (pytest.approx(1.0),) and facts.names == ("sum:cos",)


@pytest.mark.parametrize(
    "cases, said",
    [
        (lambda: 1 / 0, "cases() raised ZeroDivisionError"),
        (lambda: [], "cases() yielded nothing to feed the MLP"),
        (lambda: [("x", {"one": 1})], "cases() yielded ('x', {'one': 1}) at 0; it needs (name, fed, wanted)"),
    ],
)
def test_a_puzzles_cases_that_cannot_be_fed_are_one_line_when_it_loads(cases, said):
    with pytest.raises(CircuitError) as e:
        PatchedMLP("adds", cases=cases).validate([], [], CircuitError)
    assert str(e.value).startswith(said) and "\n" not in str(e.value)
