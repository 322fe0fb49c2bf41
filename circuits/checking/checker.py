"""The checker: runs a puzzle's targets on worked examples, every small input, a random bulk and a
hypothesis property test, and shrinks the first failure to a minimal input: a failure is data (its stage, shortest
input and trace), which circuits.explain explains for whatever shows it. Knows nothing of pytest."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence

import numpy as np

from circuits import limits
from circuits.checking import cores, curriculum, guarantees, scale
from circuits.checking.code_targets import (  # noqa: F401  (part of checker's API)
    SHRINK_CALLS,
    check_code,
    check_code_on,
    code_inputs,
    code_verdict,
    shrunk,
)
from circuits.checking.evaluation import CHUNK, by_length, evaluate  # noqa: F401  (part of checker's API)
from circuits.checking.loader import Attempt
from circuits.checking.plan import EXACT, STAGES, Plan
from circuits.checking.results import (  # noqa: F401  (part of checker's API)
    SKIPPABLE,
    Coverage,
    Failure,
    NotAttempted,
    PuzzleResult,
    TargetResult,
)
from circuits.checking.search import drawn_key, examples_tried, hypothesis_stores_nothing_here, property_test  # noqa: F401
from circuits.checking.validate import declares_sharpness
from circuits.errors import CircuitError
from circuits.io import paths
from circuits.model.threads import one_blas_thread
from circuits.targets import Kind, Structure, Target, Tokens, once


# --- running behaviour targets in batches -------------------------------------------------------------------
def shrink(
    tokens: Tokens, fails: Callable[[list[Tokens]], np.ndarray], alphabet: Sequence[str], min_len: int
) -> Tokens:
    """Greedy, deterministic shrinking toward the shortest, then alphabetically first, failing input:
    drop positions, replace tokens by earlier ones in the alphabet, move earlier tokens forward."""
    order = {t: i for i, t in enumerate(alphabet)}
    current = list(tokens)
    while True:
        if len(current) > min_len:
            cands = [current[:i] + current[i + 1 :] for i in range(len(current))]
            hit = np.flatnonzero(fails(cands))
            if len(hit):
                current = cands[int(hit[0])]
                continue
        cands = [
            current[:i] + [a] + current[i + 1 :]
            for i in range(len(current))
            for a in alphabet
            if order[a] < order.get(current[i], len(alphabet))
        ]
        if cands:
            hit = np.flatnonzero(fails(cands))
            if len(hit):
                current = min((cands[int(h)] for h in hit), key=lambda c: [order.get(t, 0) for t in c])
                continue
        cands = [
            [a if t == b else t for t in current]
            for b in dict.fromkeys(current)
            for a in alphabet
            if order[a] < order.get(b, len(alphabet))
        ]  # every copy of a token at once
        if cands:
            hit = np.flatnonzero(fails(cands))
            if len(hit):
                current = min((cands[int(h)] for h in hit), key=lambda c: [order.get(t, 0) for t in c])
                continue
        cands = [
            current[:i] + [current[i + 1], current[i]] + current[i + 2 :]
            for i in range(len(current) - 1)
            if order.get(current[i + 1], 0) < order.get(current[i], 0)
        ]
        if cands:
            hit = np.flatnonzero(fails(cands))
            if len(hit):
                current = cands[int(hit[0])]
                continue
        return current


# --- the check ----------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def context():
    """What a check runs under, and an audit of many answers too: each spec computed once per distinct input,
    across stages, margins and answers; BLAS on one thread, since at puzzle sizes a second one gains nothing
    and, spinning, costs a busy machine half its speed."""
    with once.per_check(), one_blas_thread():
        yield


def check(
    attempt: Attempt, n_random: int | None = None, property_examples: int = 100, margins: bool = True
) -> PuzzleResult:
    """Check an attempt against every target of its puzzle; never raises for the learner's mistakes.

    Runs under limits.run: a check that takes longer than limits.CHECK_SECONDS is one error line
    saying what it was doing, and so is the puzzle file's own code (spec, build) raising."""
    shown = paths.shown(attempt.path)

    def run() -> PuzzleResult:
        try:
            with context(), cores.sharing(_processes(attempt)):
                return _check(attempt, n_random, property_examples, margins)
        except (CircuitError, limits.TimeLimit):
            raise
        except BaseException as e:  # noqa: BLE001 - the puzzle file's code raising (spec, build) is one line
            if limits.file_frames(e):
                raise limits.blame(e).within(shown) from e
            raise

    try:
        return limits.run(run, "check", "checking", shown, source=attempt.path)
    except CircuitError as e:
        return PuzzleResult(
            attempt, "error", [TargetResult(t.label, t.kind, "error", error=e) for t in attempt.puzzle.targets], error=e
        )


def _processes(attempt: Attempt) -> int:
    """The threads a check may score its batches on: one per core where only the checker's own code runs on them (a
    puzzle with a reference: its targets on the answer's data), one where the targets are an author's code (no
    reference yet), which may not expect to run on two threads at once."""
    trusted = attempt.reference is not None or curriculum.is_shipped(attempt.path)
    return cores.count() if trusted else 1


def _check(attempt: Attempt, n_random: int | None, property_examples: int, margins: bool) -> PuzzleResult:
    start = time.perf_counter()
    puzzle = attempt.puzzle
    labels = [(t.label, t.kind) for t in puzzle.targets]
    if not attempt.attempted:
        todo = NotAttempted(tuple(attempt.missing), attempt.path)
        return PuzzleResult(
            attempt, "not attempted", [TargetResult(l, k, "not attempted", todo=todo) for l, k in labels], todo=todo
        )
    results: list[TargetResult | None] = [None] * len(puzzle.targets)
    model = None
    if puzzle.build is not None:
        limits.doing("building the model")
        try:
            declares_sharpness(attempt)
            model = attempt.model()
        except CircuitError as e:
            return PuzzleResult(
                attempt,
                "error",
                [TargetResult(l, k, "error", error=e) for l, k in labels],
                error=e,
                seconds=time.perf_counter() - start,
            )
    leak = _leak(attempt, model)  # a write outside the declared directions: said with the targets' verdict
    for i, t in enumerate(puzzle.targets):
        limits.doing(f"checking target {limits.quoted(t.label)}")
        results[i] = check_alone(t, attempt, model, property_examples)  # None: a behaviour target
    behaviour = [i for i, t in enumerate(puzzle.targets) if t.kind is Kind.BEHAVIOUR]
    coverage = Coverage()
    error = None
    if behaviour:
        try:
            coverage = _check_behaviour(model, attempt, behaviour, results, n_random, property_examples)
        except CircuitError as e:
            error = e.within(paths.shown(attempt.path))  # every behaviour target: one line for the puzzle
            for i in behaviour:
                results[i] = TargetResult(*labels[i], "error", error=error)
    status = (
        "solved"
        if all(r.status == "passed" for r in results)
        else ("error" if any(r.status == "error" for r in results) else "failing")
    )
    if leak and status == "solved":  # every target passes, but the answer writes where the puzzle does not let it
        status, error = "error", leak
        results = [TargetResult(r.label, r.kind, "error", error=leak) for r in results]
    result = PuzzleResult(attempt, status, results, coverage, seconds=0.0, error=error)
    result.leak = leak if status == "failing" else None  # the failure is reported in full; the leak, likely its
    # cause, is a note on it (circuits.explain)
    if model is not None and guarantees.writes_for(attempt) is None:  # never silently off: said in the report
        coverage.skipped.append("writes")
    if model is not None and guarantees.reads_for(attempt) is None:
        coverage.skipped.append("reads")
    if behaviour and not margins:
        coverage.skipped.append("margins")
    if status == "solved" and margins and behaviour and model is not None:
        from circuits.checking.margins import measure

        limits.doing("measuring margins")
        result.margins = measure(attempt, model)
    result.seconds = time.perf_counter() - start
    return result


def measure_margins(result: PuzzleResult) -> PuzzleResult:
    """A solved result's margins, measured after its verdict was shown (watch): the same result, now with them.
    A result that is not solved, has them, or has no behaviour target is returned as it is."""
    attempt = result.attempt
    behaviour = attempt is not None and any(t.kind is Kind.BEHAVIOUR for t in attempt.puzzle.targets)
    if result.status != "solved" or result.margins is not None or not behaviour or attempt.puzzle.build is None:
        return result

    def run() -> None:
        from circuits.checking.margins import measure

        with context():
            model = attempt.model()
            limits.doing("measuring margins")
            result.margins = measure(attempt, model)
        if "margins" in result.coverage.skipped:
            result.coverage.skipped.remove("margins")

    try:
        limits.run(run, "check", "measuring margins", paths.shown(attempt.path), source=attempt.path)
    except CircuitError:  # the verdict stands; its margins are said to be unmeasured
        pass
    return result


def _leak(attempt, model) -> CircuitError | None:
    """The one line saying where the answer writes outside the directions its puzzle gives each head and MLP, or
    reads outside those it lets each matrix read (writes first: a stray write is often what a stray read reads)."""
    if model is None:
        return None
    writes, reads = guarantees.writes_for(attempt), guarantees.reads_for(attempt)
    if not writes and not reads:
        return None
    from circuits.checking.answer_names import head_matrices, mlp_matrices

    heads, mlps = head_matrices(attempt, model), mlp_matrices(attempt, model)
    names = {f"head {l}.{h}": n for (l, h, role), n in heads.items() if role == "W_O"}
    names |= {f"mlp {l}": n for (l, role), n in mlps.items() if role == "W_out"}
    read_names = {f"head {l}.{h} {role}": n for (l, h, role), n in heads.items()}
    read_names |= {f"mlp {l} {role}": n for (l, role), n in mlps.items() if role == "W_in"}
    shown = paths.shown(attempt.path)
    try:
        if writes:
            guarantees.check_writes(model, writes, shown, names)
        if reads:
            guarantees.check_reads(model, reads, shown, read_names)
    except CircuitError as e:
        return e
    return None


def _check_behaviour(model, attempt, idx, results, n_random, property_examples) -> Coverage:
    puzzle = attempt.puzzle
    inputs = guarantees.spanning(puzzle.inputs, model)  # random and property inputs reach the model's n_ctx
    targets = [puzzle.targets[i] for i in idx]
    worst = np.array([-np.inf if t.higher_is_worse else np.inf for t in targets])
    failed: dict[int, Failure] = {}
    checked = np.zeros(len(targets), dtype=int)
    plan = Plan.of(puzzle, n_random, inputs)
    small = plan.small(model, targets)
    cov = Coverage(
        len(plan.examples),
        len(small.inputs),
        len(plan.random),
        lengths=(inputs.min_len, inputs.max_len),
        small_max_len=small.max_len,
        small_min_len=puzzle.inputs.min_len,
        small_classes=list(small.classes),
        small_tokens=small.tokens,
        small_budget=puzzle.inputs.exhaustive_budget,
    )
    from circuits.checking.certified import skipped_stages

    cov.skipped = skipped_stages(puzzle, n_random, property_examples, small.inputs, True)  # margins: said by _check
    probe = plan.probe
    if (dead := guarantees.dead_sharpness(attempt, attempt.model, probe, evaluate)) is not None:
        raise CircuitError(guarantees.dead_sharpness_message(dead, len(probe)))
    positions = np.full(len(targets), np.nan)  # per target, the positions that had an expectation
    for stage, batch in plan.stages(small):
        open_t = [t for t in range(len(targets)) if t not in failed]
        if not batch or not open_t:
            continue
        seen = np.full(len(open_t), np.nan)
        ok, w = evaluate(model, [targets[t] for t in open_t], batch, seen)
        for row, t in enumerate(open_t):
            if not np.isnan(seen[row]):
                positions[t] = np.nan_to_num(positions[t]) + seen[row]
        for row, t in enumerate(open_t):
            checked[t] += len(batch)
            worst[t] = max(worst[t], w[row].max()) if targets[t].higher_is_worse else min(worst[t], w[row].min())
            bad = np.flatnonzero(~ok[row])
            if len(bad):
                first = min(bad, key=lambda j: (len(batch[j]), j))
                failed[t] = Failure(stage, list(batch[first]), len(batch[first]))
    if empty := guarantees.vacuous(targets, positions):
        raise CircuitError(
            f"the puzzle's target {limits.quoted(empty[0])} checks nothing: on all {int(checked.max()):,} "
            "inputs it expected nothing at any position (a spec or where that is None everywhere); "
            "a target must check something (a mistake in the puzzle, not in the answer)"
        )
    open_t = [t for t in range(len(targets)) if t not in failed]
    if open_t and property_examples:
        found = property_test(
            model, targets, open_t, None, property_examples, inputs, drawn_key(attempt, inputs, property_examples)
        )
        cov.property_examples = property_examples
        for t, ex in found.items():
            failed[t] = Failure(STAGES[3], ex, len(ex))
        for t in open_t:
            checked[t] += property_examples
    if not failed:  # every target holds: the sharpness must be a true scale of it (checking/scale.py)
        _true_scale(attempt, model, probe)
    for row, i in enumerate(idx):
        t = targets[row]
        res = TargetResult(
            t.label, t.kind, "passed", worst=float(worst[row]), metric=t.metric, checked=int(checked[row])
        )
        if row in failed:
            f = failed[row]
            fails = lambda cands, t=t: ~evaluate(model, [t], cands)[0][0]  # noqa: E731
            found = list(f.tokens)
            f.tokens = shrink(f.tokens, fails, list(inputs.alphabet), inputs.min_len)
            f.trace = model.run([f.tokens])
            f.found, f.tried, f.pool = found, [*plan.examples, *plan.extremes], [*small.inputs, *plan.sample]
            f.max_len = inputs.max_len
            res.status, res.failure, res.worst = "failed", f, None
        results[i] = res
    return cov


def _true_scale(attempt, model, probe: list[Tokens]) -> None:
    """One CircuitError line where the puzzle's sharpness is not one factor on every score the answer writes, or
    a larger one breaks it."""
    limits.doing("checking that the sharpness is a scale")
    said = scale.not_a_scale(attempt, model, probe, evaluate, guarantees.reference_attention(attempt))
    if said is not None:
        raise CircuitError(said)


def check_alone(target: Target, attempt, model, n_examples: int) -> TargetResult | None:
    """This target's result when it is checked on its own, as its kind says (code: its examples and a property test
    of `n_examples`; structure: its rows; mechanism: its interventions), or None for a behaviour target, which is
    run with the others on shared batches."""
    if target.kind is Kind.CODE:
        return check_code(target, attempt, n_examples)
    if target.kind is Kind.STRUCTURE:
        return check_structure(target, attempt, model)
    if target.kind is Kind.MECHANISM:
        return check_mechanism(target, attempt, model)
    return None


def check_structure(target: Structure, attempt, model) -> TargetResult:
    try:
        rows = target.run(attempt.answer, model)
    except CircuitError as e:
        return TargetResult(target.label, Kind.STRUCTURE, "error", error=e.within(paths.shown(attempt.path)))
    ok = all(r[3] for r in rows)
    res = TargetResult(target.label, Kind.STRUCTURE, "passed" if ok else "failed", structure=rows, checked=len(rows))
    if not ok:
        bad = [r for r in rows if not r[3]]
        res.failure = Failure(EXACT, [], 0, finding=target.finding(bad[0]))
    return res


def check_mechanism(target, attempt, model) -> TargetResult:
    """A mechanism target's result: its interventions run on the model; failed at its first failure."""
    try:
        verdict = target.run(attempt.puzzle, model)
    except CircuitError as e:
        return TargetResult(target.label, target.kind, "error", error=e.within(paths.shown(attempt.path)))
    tried = verdict.tried
    res = TargetResult(target.label, target.kind, "passed", checked=tried.patched + tried.zeroed, interventions=tried)
    if verdict.finding is not None:
        base = list(verdict.finding.base)
        res.status, res.failure = "failed", Failure(verdict.stage, base, len(base), finding=verdict.finding)
    return res
