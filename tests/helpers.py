"""Shared test helpers: load a reference solution, swap in a wrong answer, check it."""

from pathlib import Path

from circuits.checking.checker import check
from circuits.checking.loader import load

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
STEMS = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.py"))  # every reference solution, new ones included


def solution(stem: str):
    return load(SOLUTIONS / f"{stem}.py")


def check_with(stem: str, n_random: int = 2000, property_examples: int = 100, margins: bool = False, **answer):
    """Check solutions/<stem>.py with some answer names replaced."""
    attempt = solution(stem)
    for name, value in answer.items():
        setattr(attempt.answer, name, value)
    return check(attempt, n_random=n_random, property_examples=property_examples, margins=margins)


def only_failure(result):
    failed = [t for t in result.targets if t.status == "failed"]
    assert failed, f"expected a failure, got {[t.status for t in result.targets]}"
    return failed[0]
