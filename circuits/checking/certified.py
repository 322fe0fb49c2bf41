"""What a check did not certify: the stages it skipped (display/words.py says why, display/json.py as JSON)."""

from __future__ import annotations


def skipped_stages(puzzle, n_random: int | None, property_examples: int, small: list, margins: bool) -> list[str]:
    """Each stage of the check that did not run (checker.SKIPPABLE): no small input fits the exhaustive budget,
    no random inputs, no property examples, no margins."""
    inputs = puzzle.inputs
    out = []
    if not small:
        out.append("exhaustive")
    if (inputs.n_random if n_random is None else n_random) == 0:
        out.append("random")
    if not property_examples:
        out.append("property")
    if not margins:
        out.append("margins")
    return out
