"""Worksheets say only what is true: each coverage claim in a puzzle's statement matches what the checker runs.

The claims have one wording, which this test reads: "checked on every string of 1 to K …" (the
exhaustive stage reaches length K), "random strings of up to N" (the random inputs reach length N),
"(all M of them)" (the exhaustive stage has M inputs), "every sentence of the template (S" (a
sentence family's deterministic extremes number S). The checker's figures come from the same planning
functions `check` uses (plan.Plan, guarantees.spanning), so no full check runs here.
"""

import re

import pytest
from helpers import SOLUTIONS, solution

from circuits.checking import guarantees
from circuits.checking.plan import Plan

STEMS = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.py"))
# the worksheets that state what they are checked on (issue 23 named the first seven as overclaiming)
CLAIMING = ["07_induction_k_composition", "09_duplicate_token", "10_seen_before", "14_skip_trigram",
            "15_q_composition", "17_kv_memory", "21_ioi_mini", "19_balanced_parens", "20_find_min"]


def statement(stem: str) -> str:
    """The worksheet's prose (the module docstring), on one line."""
    attempt = solution(stem)
    return " ".join((attempt.puzzle.build.__globals__["__doc__"] or "").split()) if attempt.puzzle.build else ""


def claims(text: str) -> dict[str, list[int]]:
    def numbers(pattern: str) -> list[int]:
        return [int(m.replace(",", "")) for m in re.findall(pattern, text, flags=re.IGNORECASE)]

    return {"exhaustive to": numbers(r"checked on every string of 1 to (\d+)"),
            "random up to": numbers(r"random strings of up to (\d+)"),
            "exhaustive count": numbers(r"\(all ([\d,]+) of them\)"),
            "sentences": numbers(r"every sentence of the template \((\d+)")}


def coverage(stem: str) -> dict[str, int]:
    """What the checker runs on the reference: the longest exhaustive length and count, the random lengths."""
    attempt = solution(stem)
    model = attempt.model()
    puzzle, inputs = attempt.puzzle, guarantees.spanning(attempt.puzzle.inputs, model)  # random inputs reach n_ctx
    targets = [t for t in puzzle.targets if t.kind == "behaviour"]
    small = Plan.of(puzzle, None, inputs).small(model, targets).inputs
    sentences = [x for f in inputs.families if hasattr(f, "extremes") and "sentence" in f.name
                 for x in f.extremes(inputs.min_len, inputs.max_len)]
    return {"exhaustive to": max(map(len, small), default=0), "random up to": inputs.max_len,
            "exhaustive count": len(small), "sentences": len(sentences)}


def test_the_claims_are_read():
    """The patterns find the claims they are meant to (a regex that matches nothing would pass every worksheet)."""
    text = ("Checked on every string of 1 to 6 tokens and on random strings of up to 15 (all 8,190 of "
            "them); every sentence of the template (504: …)")
    assert claims(text) == {"exhaustive to": [6], "random up to": [15], "exhaustive count": [8190], "sentences": [504]}


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
            assert value == runs[what], (f"{stem}: the worksheet says {what} {value}, the checker runs "
                                         f"{what} {runs[what]}")


def test_an_overclaim_is_caught():
    """The old wording of 09 ("every string of 1 to 11") against what the checker runs (every string to 6)."""
    runs = coverage("09_duplicate_token")
    said = claims("Checked on every string of 1 to 11 tokens after BOS")
    assert said["exhaustive to"] == [11] and runs["exhaustive to"] == 6


def test_08_names_seed_000s_own_sequence_right():
    """Seed 000 shows the tail of its 41 tokens: the last 5 random tokens, then all 20 again (ids from
    torch.manual_seed(2025); randint(0, 100), GPT-2's tokens 0–93 being the printable characters from '!').
    Renamed to letters in order of first appearance, those 20 tokens are the worked example 08 gives."""
    tail = ['N', 'Y', '"', 'D', '"', 'O', '/', 'C', 'c', 'A', ']', 'l', '(', 'Y', 'a', 'o', '=', '^', 'c', 'O',
            'N', 'Y', '"', 'D', '"']  # as printed in seed 000, exercise 1.2
    tokens = tail[5:]
    assert tokens[-5:] == tail[:5]  # the shown tail starts inside the first copy: the sequence repeats
    names: dict[str, str] = {}
    renamed = "".join(names.setdefault(t, "abcdefghijklmnopqrstuvwxyz"[len(names)]) for t in tokens)
    assert renamed == "abcdefghijklmdaniopo"
    assert renamed * 2 in solution("08_induction_repeated").puzzle.examples
