"""What a check certified and what it skipped, in words (for the report) and as JSON."""

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


def result_json(result) -> dict:
    """A PuzzleResult as plain JSON: status, each target (with its failure), coverage with skipped stages, margins."""
    cov = result.coverage
    targets = []
    for t in result.targets:
        row = {"label": t.label, "kind": t.kind, "status": t.status, "checked": t.checked,
               "metric": t.metric or None, "worst": t.worst, "message": t.message or None}
        f = t.failure
        if f is not None:
            e = f.explanation
            row["failure"] = {"stage": f.stage, "input": list(f.tokens), "found_length": f.found_len,
                              "summary": e.summary if e is not None else f.text, "hint": e.hint if e is not None else None}
        targets.append(row)
    return {"puzzle": result.name, "file": str(result.attempt.path) if result.attempt else None, "status": result.status,
            "message": result.message or None, "targets": targets,
            "coverage": {"examples": cov.examples, "small_inputs": cov.small, "small_inputs_note": cov.small_note or None,
                         "random": cov.random, "property_examples": cov.property_examples, "lengths": list(cov.lengths),
                         "skipped": list(getattr(cov, "skipped", []))},
            "margins": result.margins.describe() if result.margins is not None else None,
            "edited_givens": [{"name": e.name, "line": e.line, "removed": e.removed}
                              for e in (result.attempt.edits if result.attempt else [])],
            "seconds": round(result.seconds, 3)}
