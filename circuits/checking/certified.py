"""What a check certified and what it skipped, in words (for the report)."""

from __future__ import annotations


def exhaustive_skipped(inputs) -> str:
    """Why no input was enumerated: even the shortest length alone has more strings than the budget."""
    a, L = len(inputs.alphabet), inputs.min_len
    return (f"exhaustive: skipped, {a}^{L} = {a ** L:,} inputs exceed the budget of {inputs.exhaustive_budget:,} "
            "(Inputs(exhaustive_budget=...))")


def skipped_stages(puzzle, n_random: int | None, property_examples: int, small: list, margins: bool) -> list[str]:
    """Each stage of the check that did not run, and why."""
    inputs = puzzle.inputs
    out = []
    if not small:
        out.append(exhaustive_skipped(inputs))
    if (inputs.n_random if n_random is None else n_random) == 0:
        out.append("random inputs: skipped, n_random = 0")
    if not property_examples:
        out.append("property test: skipped, 0 examples asked for")
    if not margins:
        out.append("margins: skipped, as asked (--no-margins)")
    return out
