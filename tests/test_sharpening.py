"""A hint that names a sharpening factor fixes what it names: the factor is sized for every length the puzzle
promises (the failing input at its full length, not the shrunk one the report shows) and rounded up, so following
it once fixes a failure of scale alone. Issue 37: 24 was told "×1.04" (sized for a shrunk 8-key input) where the
16-token input that failed needed ×1.24, and after 17 checks still failed."""

import re

import pytest
from helpers import STEMS, solution

from circuits.explain import check, hint, sharpening

FACTOR = re.compile(
    r"raise (?:your sharpness symbol )?s ×(\d+(?:\.\d+)?)"  # and as hints said it before sizing:
    r"|×(\d+(?:\.\d+)?) \(raise your sharpness symbol s by that much\)"
)


def _with_s(stem: str) -> bool:
    params = getattr(solution(stem).answer, "params", None)
    return isinstance(params, dict) and any(str(k) == "s" for k in params)


SHARP = [stem for stem in STEMS if _with_s(stem)]


def _checked(attempt, s: float):
    params = attempt.answer.params
    key = next(k for k in params if str(k) == "s")
    attempt.answer.params = {**params, key: s}
    return check(attempt, n_random=2000, property_examples=100, margins=False)


def _said_factor(result) -> float:
    """The factor the report's first failing target names for s (in its hint or the note after it)."""
    for t in result.targets:
        if t.status == "failed" and t.failure.explanation is not None:
            found = FACTOR.findall(hint(t.failure.explanation))
            assert found, f"{result.name}: the hint names no factor for s: {hint(t.failure.explanation)}"
            return float(next(x for x in found[0] if x))
    raise AssertionError(f"{result.name}: no failing target with a hint")


def test_there_are_puzzles_with_s():
    assert len(SHARP) >= 15


@pytest.mark.parametrize("stem", SHARP)
def test_following_the_factor_fixes_a_quarter_s(stem):
    attempt = solution(stem)
    s = float(next(v for k, v in attempt.answer.params.items() if str(k) == "s"))
    cut = 4.0
    result = _checked(attempt, s / cut)
    while result.status == "solved" and cut < 64:  # 07's reference keeps a wide margin: cut further until it fails
        cut *= 4
        result = _checked(attempt, s / cut)
    assert result.status == "failing", f"{stem} still passes with s at 1/{cut:g}"
    s /= cut
    for _ in range(2):
        s *= _said_factor(result)
        result = _checked(attempt, s)
        if result.status == "solved":
            break
    assert result.status == "solved", f"{stem}: after following the factor twice (s = {s:.4g}) it still fails"


def test_said_factors_round_up():
    assert sharpening.rounded_up(1.2341) == 1.24
    assert sharpening.rounded_up(1.0001) == 1.01
    assert sharpening.rounded_up(4.0) == 4.0
    assert sharpening.rounded_up(12.31) == 12.4


def test_10_with_too_small_an_s_says_raise_s():
    """Issue 37: 10's hint (a readout the attention gets wrong) never said "raise s", where 07's does."""
    from helpers import check_with, hint_of, only_failure

    said = hint_of(only_failure(check_with("10_seen_before", params={"s": 5})).failure.explanation)
    fixes = r"Raising s alone fixes this: ×[\d.]+ makes it pass at every length up to \d+ \(raise s ×"
    assert re.search(fixes, said), said
