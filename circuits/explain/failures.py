"""A checker's result, explained: each failing behaviour target's facts (explain), in the puzzle's terms, with the
notes the failures say together: one sharpening factor for every target it fixes, an earlier failure likely the
cause of a later one, a write or read outside the declaration likely the cause of the first."""

from __future__ import annotations

from circuits import limits
from circuits.checking.results import PuzzleResult, TargetResult
from circuits.errors import CircuitError
from circuits.explain.notes import LeakNote, earliest_first
from circuits.explain.sharpening import one_factor, sample, size_sharpening
from circuits.explain.tables import explain
from circuits.explain.terms import puzzle_terms
from circuits.io import paths
from circuits.targets import Kind


def check(attempt, **kw) -> PuzzleResult:
    """checker.check, explained: what a report, JSON or notebook shows."""
    from circuits.checking.checker import check as verdict

    return explained(verdict(attempt, **kw))


def cached_check(attempt, use_cache: bool = True, **kw) -> PuzzleResult:
    """cache.cached_check, explained (a cached result is solved: nothing to explain)."""
    from circuits.checking.cache import cached_check as verdict

    return explained(verdict(attempt, use_cache, **kw))


def explained(result: PuzzleResult) -> PuzzleResult:
    """`result` with an explanation on each failing behaviour target and the notes the failures say together (the
    same result, changed; once). An explanation that cannot be made (the puzzle's own code raising, or running
    over the time limit) makes the result one error line, as the check would."""
    attempt = result.attempt
    if result.explained or attempt is None or not any(r.status == "failed" for r in result.targets):
        result.explained = True
        return result
    shown = paths.shown(attempt.path)

    def run() -> None:
        from circuits.checking.checker import context

        try:
            with context():
                _explain(result)
        except (CircuitError, limits.TimeLimit):
            raise
        except BaseException as e:  # noqa: BLE001 - the puzzle file's code raising (a spec) is one line, as in check
            if limits.file_frames(e):
                raise limits.blame(e).within(shown) from e
            raise

    try:
        limits.run(run, "check", "explaining a failure", shown, source=attempt.path)
    except CircuitError as e:
        labels = [(t.label, t.kind) for t in attempt.puzzle.targets]
        return PuzzleResult(attempt, "error", [TargetResult(l, k, "error", error=e) for l, k in labels], error=e)
    result.explained = True
    return result


def _explain(result: PuzzleResult) -> None:
    attempt = result.attempt
    targets = attempt.puzzle.targets
    behaviour = [i for i, t in enumerate(targets) if t.kind is Kind.BEHAVIOUR]
    for i in behaviour:
        r, t = result.targets[i], targets[i]
        f = r.failure
        if r.status != "failed" or f is None or f.trace is None or f.explanation is not None:
            continue
        limits.doing(f"explaining target {limits.quoted(t.label)}")
        f.explanation = explain(t, f.trace, f.tokens)
        f.explanation.terms = puzzle_terms(attempt, f.trace.model)
        size_sharpening(attempt, t, f, [f.found, *f.tried, *sample(f.pool)], f.max_len)
    failed = [result.targets[i] for i in behaviour]
    one_factor(failed)
    earliest_first([targets[i] for i in behaviour], failed)
    if result.leak is not None:  # the failure is reported in full; the leak is likely its cause
        _note_leak(result.targets, result.leak)


def _note_leak(results: list[TargetResult], leak: CircuitError) -> None:
    note = LeakNote(leak.detail, getattr(leak, "reader", None))
    hinted = [r for r in results if r.status == "failed" and r.failure and r.failure.explanation]
    if hinted:  # the first failure that has a hint (a mechanism's or a structure's finding has none)
        hinted[0].failure.explanation.notes.append(note)
    elif (found := next((r for r in results if r.status == "failed" and r.failure), None)) is not None:
        found.failure.notes.append(note)  # said after its finding
