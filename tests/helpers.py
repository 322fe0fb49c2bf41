"""Shared test helpers: load a reference solution, swap in a wrong answer, check it."""

from pathlib import Path

from circuits.checking.checker import check
from circuits.checking.loader import load

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
STEMS = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.py"))  # every reference solution, new ones included


def fresh_project(root: Path, stems, folders=("puzzles", "solutions")) -> Path:
    """A project at `root`: solutions/ as shipped and puzzles/ as a learner first gets it, the stubs rebuilt from the
    solutions (tests never read the learner's own puzzles/)."""
    from circuits.checking.reset import stub_text

    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for stem in stems:
        source = SOLUTIONS / f"{stem}.py"
        if "solutions" in folders:
            (root / "solutions" / source.name).write_bytes(source.read_bytes())
        if "puzzles" in folders:
            (root / "puzzles" / source.name).write_text(stub_text(source), encoding="utf-8")
    return root


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
