"""Every puzzle's mutants get reports that hold three rules (issue 24): no report names a matrix outside the puzzle's
answer and givens, no tie is reported as a call to sharpen, and every readout failure blamed on the attention shows
the heatmap of the head it blames.

The mutants are circuits/audit/mutants.py's, PER_PUZZLE of each puzzle taken at even steps through its list (a
fixed sample: the same every run), each checked once for the whole module with a light check (no property test).
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
from helpers import SOLUTIONS, hint_of, solution

from circuits.audit.mutants import mutants
from circuits.display import words
from circuits.display.render import to_text
from circuits.display.report import target_report
from circuits.explain import check, diagnosis
from circuits.targets import Attention, NextToken, Output

PER_PUZZLE = 6
STEMS = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.py"))
NAME = re.compile(r"\bW_[A-Za-z0-9_¹²³⁴⁵⁶⁷⁸⁹⁰]+")
SUPERSCRIPT = str.maketrans("¹²³⁴⁵⁶⁷⁸⁹⁰", "1234567890")
GIVEN_ROLES = {"W_Q", "W_K", "W_V", "W_O", "W_in", "W_out", "W_U", "W_E", "W_pos"}


def sample(items: list, k: int) -> list:
    return items if len(items) <= k else [items[i * len(items) // k] for i in range(k)]


def checked_sample(stem: str) -> list[tuple]:
    """(stem, mutant name, attempt, result, model or None) for the sample of one puzzle's mutants. The checks run
    under one checker.context(), as an audit's do: the puzzle's specs are computed once per input for all of them
    (the results are the same: a spec depends on the input alone)."""
    from circuits.checking.checker import context

    attempt = solution(stem)
    out = []
    with context():
        for m in sample(mutants(attempt), PER_PUZZLE):
            trial = copy.copy(attempt)
            trial.answer = m.answer
            result = check(trial, n_random=200, property_examples=0, margins=False)
            try:
                model = trial.model() if attempt.puzzle.build is not None else None
            except Exception:  # noqa: BLE001 - a mutant that does not build has no model; its message is checked
                model = None
            out.append((stem, m.name, trial, result, model))
    return out


@pytest.fixture(scope="module")
def checked():
    """checked_sample of every puzzle, each on one worker thread (limits.session) so that its checks, each still under
    its own time limit, share that thread's context."""
    from circuits import limits

    return [row for stem in STEMS for row in limits.session(lambda: checked_sample(stem), stem)]


def allowed_names(attempt, model) -> set[str]:
    """The puzzle's answer, its givens (the embedding, W_U and W_pos where the model has them), the circuits
    built of them (W_QK, W_OV) and whatever the puzzle's own labels name."""
    ok = set(attempt.puzzle.answer) | {"W_E", "W_QK", "W_OV"}
    if model is not None:
        ok |= {"W_U"} if model.W_U is not None else set()
        ok |= {"W_pos"} if model.W_pos is not None else set()
    for t in attempt.puzzle.targets:
        ok |= {n.translate(SUPERSCRIPT) for n in NAME.findall(t.label)}
    return ok


def reports(result) -> list[str]:
    texts = [words.said(result)] if words.said(result) else []
    return texts + [to_text(target_report(t), width=200) for t in result.targets if t.status in ("failed", "error")]


def stray_names(text: str, ok: set[str]) -> list[str]:
    """Matrix names in `text` that are neither allowed nor a real matrix said to be a given ("W_V (a given)")."""
    stray = []
    for m in NAME.finditer(text):
        name = m.group(0).translate(SUPERSCRIPT)
        given = text[m.end() :].startswith(" (a given)") and name in GIVEN_ROLES
        if name not in ok and not given:
            stray.append(name)
    return stray


def test_the_sample_covers_every_puzzle_and_fails_them(checked):
    assert {stem for stem, *_ in checked} == set(STEMS)
    rejected = [r for _, _, _, r, _ in checked if r.status != "solved"]
    assert len(rejected) >= len(checked) * 3 // 4, "most mutants must fail, or the rules below check nothing"


def test_no_report_names_a_matrix_outside_the_answer_and_givens(checked):
    bad = []
    for stem, name, attempt, result, model in checked:
        ok = allowed_names(attempt, model)
        for text in reports(result):
            if stray := stray_names(text, ok):
                line = next(line for line in text.splitlines() if stray[0] in line.translate(SUPERSCRIPT))
                bad.append(f"{stem} / {name}: {sorted(set(stray))} in {line.strip()[:160]!r}")
    assert not bad, "\n".join(bad)


def _tie(target, failure) -> bool:
    """Whether the failure is a tie the softmax cannot break: an attention target's best key against the best
    other key, or a next-token target's expected token against its best rival."""
    e, trace = failure.explanation, failure.trace
    q = e.position
    if isinstance(target, Attention):
        keys = target.key_sets(trace, [failure.tokens])[0, q, : q + 1]
        scores = trace.layers[target.layer].scores[0, target.head, q, : q + 1]
        if keys.all() or not keys.any():
            return False
        return diagnosis.tied(float(scores[keys].max()), float(scores[~keys].max()))
    if isinstance(target, NextToken):
        want = trace.model.vocab.id(target.spec(failure.tokens)[q - (len(trace.tokens(0)) - len(failure.tokens))])
        lp = trace.logprobs[0, q]
        return diagnosis.tied(float(lp[want]), float(np.delete(lp, want).max()))
    return False


def test_no_tie_is_reported_as_a_call_to_sharpen(checked):
    ties, bad = 0, []
    for stem, name, attempt, result, _ in checked:
        for target, r in zip(attempt.puzzle.targets, result.targets):
            if r.status != "failed" or r.failure.explanation is None or not _tie(target, r.failure):
                continue
            ties += 1
            hint = hint_of(r.failure.explanation)
            if "sharpen" in hint or "sharpness symbol" in hint or "×10⁴" in hint:
                bad.append(f"{stem} / {name} / {r.label}: {hint[:160]}")
    assert ties >= 5, f"only {ties} ties in the sample: the rule is not exercised"
    assert not bad, "\n".join(bad)


BLAMES_ATTENTION = re.compile(r"the attention is (off|not|the cause)|attention leaks|attention went to the wrong")


def test_every_attention_caused_readout_failure_shows_the_heatmap(checked):
    seen, bad = 0, []
    for stem, name, attempt, result, _ in checked:
        for target, r in zip(attempt.puzzle.targets, result.targets):
            if r.status != "failed" or not isinstance(target, (Output, NextToken)):
                continue
            e = r.failure.explanation
            if not BLAMES_ATTENTION.search(hint_of(e)):
                continue
            seen += 1
            text = to_text(target_report(r), width=200)
            if e.head is None or f"attention of head {e.head[0]}.{e.head[1]}" not in text:
                bad.append(f"{stem} / {name} / {r.label}: no heatmap for {hint_of(e)[:120]}")
    assert seen >= 3, f"only {seen} attention-caused readout failures in the sample: the rule is not exercised"
    assert not bad, "\n".join(bad)
