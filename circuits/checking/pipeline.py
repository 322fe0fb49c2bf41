"""`circuits check`, one way down: load → validate → plan → evaluate → verdict; explain/ explains a failure and
display/ words the report.

Each stage is one call into its own module, and nothing flows back up:
    load      loader.load          the puzzle file's code run under a time limit: the Attempt (puzzle, answer)
    validate  validate.validated   the puzzle itself, before any answer: one line per author's mistake
    plan      plan.Plan            the stages of inputs (worked examples, small inputs, random, property test)
    evaluate  evaluation.evaluate  the model's outputs scored against each target, in batches
    verdict   checker.check        a PuzzleResult of facts (statuses, failures as data, coverage, margins, the error)
    explain   explain.explained    each failing behaviour target's facts of why, and their words (circuits/explain/)
    report    display/             report.py, tables and json.py turn those facts into words
"""

from __future__ import annotations

from pathlib import Path

from circuits.checking import loader
from circuits.checking.loader import Attempt
from circuits.checking.validate import validated


def load(path: str | Path) -> Attempt:
    """The first two stages: the puzzle file loaded and its puzzle validated (a CircuitError line for either)."""
    return validated(loader.load(path))


def load_puzzle(name_or_path: str, solution: bool = False) -> Attempt:
    """load, for a puzzle named as `circuits check` names it: a path, a name, an id or a number (loader.find)."""
    return load(loader.find(name_or_path, solution))
