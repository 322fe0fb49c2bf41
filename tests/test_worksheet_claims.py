"""Worksheets say only what is true: each coverage claim in a puzzle's statement matches what the checker runs.

The claims have one wording, which this test reads: "checked on every string of 1 to K …" (the
exhaustive stage reaches length K), "random strings of up to N" (the random inputs reach length N),
"(all M of them)" (the exhaustive stage has M inputs), "every sentence of the template (S" (a
sentence family's deterministic extremes number S), "A–B random letters written twice" (the random
inputs are halves of A to B tokens, each written twice), "n_ctx = C" (the model's context). The
checker's figures come from the same planning functions `check` uses (plan.Plan, guarantees.spanning),
so no full check runs here.

Two more kinds of claim are pinned below: a write a worksheet says is refused ("nothing at all into
x, y or one: … any entry above 10⁻⁹ there is refused") is one the declared writes refuse, at
guarantees.WRITE_TOL, and no worksheet gives a tolerance to a write that is refused outright; and the
MLP targets of 26 (its width bound, the angles its intervention feeds, their tolerance) are as stated.
"""

import math
import re

import pytest
from helpers import SOLUTIONS, solution

from circuits.checking import guarantees
from circuits.checking.plan import Plan
from circuits.targets import MLPWidth, PatchedMLP

STEMS = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.py"))
# the worksheets that state what they are checked on (issue 23 named the first seven as overclaiming)
CLAIMING = [
    "07_induction_k_composition",
    "09_duplicate_token",
    "10_seen_before",
    "14_skip_trigram",
    "15_q_composition",
    "17_kv_memory",
    "21_ioi_mini",
    "19_balanced_parens",
    "20_find_min",
]


def statement(stem: str) -> str:
    """The worksheet's prose (the module docstring), on one line."""
    attempt = solution(stem)
    return " ".join((attempt.puzzle.build.__globals__["__doc__"] or "").split()) if attempt.puzzle.build else ""


def claims(text: str) -> dict[str, list[int]]:
    def numbers(pattern: str) -> list[int]:
        return [int(m.replace(",", "")) for m in re.findall(pattern, text, flags=re.IGNORECASE)]

    return {
        "exhaustive to": numbers(r"checked on every string of 1 to (\d+)"),
        "random up to": numbers(r"random strings of up to (\d+)"),
        "exhaustive count": numbers(r"\(all ([\d,]+) of them\)"),
        "sentences": numbers(r"every sentence of the template \((\d+)"),
        "halves from": numbers(r"(\d+)–\d+ random \w+ written twice"),
        "halves to": numbers(r"\d+–(\d+) random \w+ written twice"),
        "n_ctx": numbers(r"\bn_ctx = (\d+)"),
    }


def coverage(stem: str) -> dict[str, int]:
    """What the checker runs on the reference: the longest exhaustive length and count, the random lengths."""
    attempt = solution(stem)
    model = attempt.model()
    puzzle, inputs = attempt.puzzle, guarantees.spanning(attempt.puzzle.inputs, model)  # random inputs reach n_ctx
    targets = [t for t in puzzle.targets if t.kind == "behaviour"]
    plan = Plan.of(puzzle, None, inputs)
    small = plan.small(model, targets).inputs
    sentences = [
        x
        for f in inputs.families
        if hasattr(f, "extremes") and "sentence" in f.name
        for x in f.extremes(inputs.min_len, inputs.max_len)
    ]
    halves = [len(x) // 2 for x in plan.random]  # what a random input written twice is made of
    return {
        "exhaustive to": max(map(len, small), default=0),
        "random up to": inputs.max_len,
        "exhaustive count": len(small),
        "sentences": len(sentences),
        "halves from": min(halves, default=0),
        "halves to": max(halves, default=0),
        "n_ctx": model.n_ctx,
    }


def test_the_claims_are_read():
    """The patterns find the claims they are meant to (a regex that matches nothing would pass every worksheet)."""
    text = (
        "Checked on every string of 1 to 6 tokens and on random strings of up to 15 (all 8,190 of "
        "them); every sentence of the template (504: …); BOS + 2–20 random letters written twice, up to "
        "the model's n_ctx = 41"
    )
    assert claims(text) == {
        "exhaustive to": [6],
        "random up to": [15],
        "exhaustive count": [8190],
        "sentences": [504],
        "halves from": [2],
        "halves to": [20],
        "n_ctx": [41],
    }


@pytest.mark.parametrize("stem", CLAIMING)
def test_the_worksheet_states_what_it_is_checked_on(stem):
    assert any(claims(statement(stem)).values()), f"{stem}: no coverage claim in the worksheet"


@pytest.mark.parametrize("stem", [s for s in STEMS if s != "00_attention"])
def test_each_coverage_claim_matches_the_checker(stem):
    said = claims(statement(stem))
    if not any(said.values()):
        pytest.skip("the worksheet makes no coverage claim")
    runs = coverage(stem)
    for what, values in said.items():
        for value in values:
            assert value == runs[what], (
                f"{stem}: the worksheet says {what} {value}, the checker runs {what} {runs[what]}"
            )


def test_an_overclaim_is_caught():
    """The old wording of 09 ("every string of 1 to 11") against what the checker runs (every string to 6)."""
    runs = coverage("09_duplicate_token")
    said = claims("Checked on every string of 1 to 11 tokens after BOS")
    assert said["exhaustive to"] == [11] and runs["exhaustive to"] == 6


def test_08s_old_lengths_are_caught():
    """08 once said "BOS + 2–12 random letters written twice"; its inputs are raised to n_ctx = 41, halves of 20."""
    runs = coverage("08_induction_repeated")
    said = claims("The check runs on BOS + 2–12 random letters written twice (half of the inputs …)")
    assert said["halves to"] == [12] and runs["halves to"] == 20 and runs["n_ctx"] == 41
    assert claims(statement("08_induction_repeated"))["halves to"] == [20]


# --- writes: refused outright, or held to a tolerance ---------------------------------------------------------------
REFUSED = re.compile(
    r"nothing at all into (.+?): (?:their|the) rows of .+? must be 0 \(any entry above 10⁻([⁰¹²³⁴⁵⁶⁷⁸⁹]+) "
    r"there is refused\)"
)
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
TOLERATED = re.compile(r"nothing into ([\w:]+(?:(?:, | or | and )[\w:]+)*)[^().]*\((?:each )?within")


def directions(said: str) -> list[str]:
    """ "x, y or one" -> ["x", "y", "one"]; "tok:" names the family tok:*."""
    return [d.strip() for d in re.split(r", | or | and ", said) if d.strip()]


def matching(direction: str, labels) -> list[str]:
    return [lab for lab in labels if lab == direction or (direction.endswith(":") and lab.startswith(direction))]


def refused_writes(stem: str) -> list[str]:
    """What the worksheet says is refused outright and is not: each as "direction for writer"."""
    attempt = solution(stem)
    writes, labels = guarantees.writes_for(attempt), attempt.model().residual.labels
    wrong = []
    for said, exponent in REFUSED.findall(statement(stem)):
        said_tol = 10.0 ** -int(exponent.translate(SUPERSCRIPT))
        assert said_tol == guarantees.WRITE_TOL, f"{stem}: says 10⁻{exponent}, refuses above {guarantees.WRITE_TOL:g}"
        assert writes is not None, f"{stem}: says a write is refused, but the puzzle declares no writes"
        if said == "any other":  # each writer writes its own direction and nothing else
            wrong += [f"a second family for {w}" for w, given in writes.items() if len(given) != 1]
            continue
        for d in directions(said):
            found = matching(d, labels)
            assert found, f"{stem}: the worksheet names {d!r}, which is no direction of the model"
            wrong += [
                f"{lab} for {w}"
                for w in writes
                if w.startswith("mlp")
                for lab in found
                if guarantees.allowed(writes[w], lab)
            ]
    return wrong


def tolerated_but_refused(text: str, writes: dict, labels) -> list[str]:
    """The directions `text` holds to a tolerance ("nothing into x (within 0.1 …)") that no writer may write at all."""
    said = [d for m in TOLERATED.findall(text) for d in directions(m)]
    return [
        lab for d in said for lab in matching(d, labels) if not any(guarantees.allowed(g, lab) for g in writes.values())
    ]


@pytest.mark.parametrize("stem", ["16_xor_mlp", "17_kv_memory", "19_balanced_parens", "25_equal_mlp"])
def test_a_write_the_worksheet_says_is_refused_is_refused(stem):
    assert REFUSED.search(statement(stem)), f"{stem}: no refused write stated"
    assert refused_writes(stem) == []


@pytest.mark.parametrize("stem", [s for s in STEMS if s != "00_attention"])
def test_no_worksheet_gives_a_tolerance_to_a_refused_write(stem):
    attempt = solution(stem)
    writes = guarantees.writes_for(attempt)
    if writes is None:
        pytest.skip("no declared writes")
    assert tolerated_but_refused(statement(stem), writes, attempt.model().residual.labels) == []


def test_the_old_tolerance_wording_is_caught():
    """16 once said "and nothing into x, y or one (within 0.1 in each direction)"; x, y and one are refused."""
    attempt = solution("16_xor_mlp")
    old = "it writes x XOR y into xor, and nothing into x, y or one (within 0.1 in each direction), for every string"
    assert tolerated_but_refused(old, guarantees.writes_for(attempt), attempt.model().residual.labels) == [
        "x",
        "y",
        "one",
    ]
    assert refused_writes("16_xor_mlp") == [] and guarantees.WRITE_TOL == 1e-9


# --- 26: the MLP's width and the intervention, as the worksheet states them -----------------------------------------
def test_26_states_its_mlp_targets():
    attempt, text = solution("26_modular_addition"), statement("26_modular_addition")
    width = next(t for t in attempt.puzzle.targets if isinstance(t, MLPWidth))
    patched = next(t for t in attempt.puzzle.targets if isinstance(t, PatchedMLP))
    assert f"at most {width.most} hidden units (d_mlp ≤ {width.most}), fewer than the 25 pairs" in text
    assert width.most < 25  # no unit per pair
    cases = patched.cases()
    step = 360 / math.isqrt(len(cases))
    assert f"every {step:g}° around the circle ({len(cases):,} pairs" in text and 72 % step == 0
    assert f"within {patched.tol:g} in each" in text
    feeds = {d for _, fed, _ in cases for d in fed} | {d for _, _, wanted in cases for d in wanted}
    assert feeds == {"prev:cos", "prev:sin", "tok:cos", "tok:sin", "one", "sum:cos", "sum:sin"}


def test_08_names_seed_000s_own_sequence_right():
    """Seed 000 shows the tail of its 41 tokens: the last 5 random tokens, then all 20 again (ids from
    torch.manual_seed(2025); randint(0, 100), GPT-2's tokens 0–93 being the printable characters from '!').
    Renamed to letters in order of first appearance, those 20 tokens are the worked example 08 gives."""
    tail = list('NY"D"O/CcA]l(Yao=^cONY"D"')  # as printed in seed 000, exercise 1.2
    tokens = tail[5:]
    assert tokens[-5:] == tail[:5]  # the shown tail starts inside the first copy: the sequence repeats
    names: dict[str, str] = {}
    renamed = "".join(names.setdefault(t, "abcdefghijklmnopqrstuvwxyz"[len(names)]) for t in tokens)
    assert renamed == "abcdefghijklmdaniopo"
    assert renamed * 2 in solution("08_induction_repeated").puzzle.examples
