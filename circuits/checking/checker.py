"""The checker: runs a puzzle's targets on worked examples, every small input, a random bulk and a
hypothesis property test, shrinks the first failure to a minimal input and explains it. Knows nothing of pytest."""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from circuits.checking import guarantees, limits, once, scale, sharpening
from circuits.checking.answer_names import puzzle_terms
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
from circuits.checking.targets import Code, EarlierFailure, Kind, LeakNote, Structure, Target, Tokens
from circuits.checking.validate import declares_sharpness
from circuits.errors import CircuitError
from circuits.io import paths
from circuits.model.threads import one_blas_thread


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
def _hypothesis_stores_nothing_here():
    """hypothesis caches constants under ./.hypothesis; point it at a temporary folder so checking writes nothing."""
    from hypothesis import configuration

    old = vars(configuration).get("__hypothesis_home_directory")
    with tempfile.TemporaryDirectory(prefix="circuits-hypothesis-") as tmp:
        configuration.set_hypothesis_home_dir(tmp)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(old)


def _property_test(
    model, targets, open_idx, strategy, n_examples, inputs=None, kept: str | None = None
) -> dict[int, Tokens]:
    """hypothesis.find over the inputs' strategy (None: `inputs.strategy()`, made only if needed); returns
    {target index: minimal failing input}. `kept` names the list of inputs tried kept on disk (drawn.py)."""
    found: dict[int, Tokens] = {}
    remaining = list(open_idx)
    if inputs is not None:
        tried = examples_tried(inputs, n_examples, kept)
        if tried is not None and evaluate(model, [targets[i] for i in remaining], tried)[0].all():
            return found  # the verdict find would give, without hypothesis or a forward pass per example
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    strategy = inputs.strategy() if strategy is None else strategy
    cfg = settings(
        max_examples=n_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    if inputs is None:
        tried = _examples_tried(strategy, cfg)
        if tried is not None and evaluate(model, [targets[i] for i in remaining], tried)[0].all():
            return found
    while remaining:
        targets_now = [targets[i] for i in remaining]

        def fails(s: Tokens) -> bool:
            return bool(s) and not evaluate(model, targets_now, [list(s)])[0].all()

        try:
            with _hypothesis_stores_nothing_here():
                example = list(find(strategy, fails, settings=cfg))
        except (NoSuchExample, Unsatisfiable):
            return found
        ok = evaluate(model, targets_now, [example])[0][:, 0]
        for i, good in zip(list(remaining), ok):
            if not good:
                found[i] = example
                remaining.remove(i)
    return found


_TRIED: dict[tuple[int, int], tuple[object, list[Tokens] | None]] = {}
_TRIED_KEPT = 64  # puzzles' lists kept; `watch` reloads a file (new Inputs) at each save


def examples_tried(inputs, n_examples: int, on_disk: str | None = None) -> list[Tokens] | None:
    """What the property test tries on `inputs` while nothing fails (as _examples_tried): the same list for every
    answer, since find is derandomized, so it is drawn once per Inputs and size, not once per check; and, where
    `on_disk` names it (drawn.key), once per machine."""
    from circuits.checking import drawn

    key = (id(inputs), n_examples)
    kept = _TRIED.get(key)
    if kept is None or kept[0] is not inputs:
        tried = drawn.load(on_disk)
        if tried is None:
            from hypothesis import HealthCheck, Phase, settings

            cfg = settings(
                max_examples=n_examples,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.generate, Phase.shrink],
                suppress_health_check=list(HealthCheck),
            )
            tried = _examples_tried(inputs.strategy(), cfg)
            if tried is not None:
                drawn.store(on_disk, tried)
        if len(_TRIED) >= _TRIED_KEPT:
            _TRIED.pop(next(iter(_TRIED)))
        kept = _TRIED[key] = (inputs, tried)  # holds inputs: its id stays its own
    return kept[1]


def _drawn_key(attempt, inputs, n_examples: int) -> str | None:
    """The name of this puzzle's property-test inputs on disk: its statement's file (the reference for a shipped
    or course puzzle, else the file itself) is part of it, since the strategy is code in that file."""
    from circuits.checking import drawn
    from circuits.checking.loader import statement_file

    try:
        source = (statement_file(attempt) or attempt.path).read_bytes()
    except (OSError, TypeError):
        return None
    return drawn.key(attempt.puzzle.id, inputs, n_examples, source)


def _examples_tried(strategy, cfg) -> list[Tokens] | None:
    """The inputs hypothesis.find tries when none of them fails, in order (derandomized, so the same each time:
    find sees the same outcomes, so it draws the same inputs). None: the strategy could not make enough."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    tried: list[Tokens] = []

    def record(s) -> bool:
        tried.append(list(s))
        return False

    try:
        with _hypothesis_stores_nothing_here():
            find(strategy, record, settings=cfg)
    except NoSuchExample:
        return [s for s in tried if s]  # find's condition skips the empty input
    except Unsatisfiable:
        return None
    return None


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
            with context():
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
    elif leak and status == "failing":  # the failure is reported in full; the leak is likely its cause
        note = LeakNote(str(leak).split(": ", 1)[1], getattr(leak, "reader", None))
        explained = [r for r in results if r.status == "failed" and r.failure and r.failure.explanation]
        if explained:  # the first failure that has a hint (a mechanism's or a structure's finding has none)
            explained[0].failure.explanation.notes.append(note)
        elif (found := next((r for r in results if r.status == "failed" and r.failure), None)) is not None:
            found.failure.notes.append(note)  # said after its finding
    result = PuzzleResult(attempt, status, results, coverage, seconds=0.0, error=error)
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
        found = _property_test(
            model, targets, open_t, None, property_examples, inputs, _drawn_key(attempt, inputs, property_examples)
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
            f.explanation = t.explain(f.trace, f.tokens)
            f.explanation.terms = puzzle_terms(attempt, model)
            _size_sharpening(
                attempt,
                t,
                f,
                [found, *plan.examples, *plan.extremes, *sharpening.sample([*small.inputs, *plan.sample])],
                inputs.max_len,
            )
            res.status, res.failure, res.worst = "failed", f, None
        results[i] = res
    _one_factor([results[i] for i in idx])
    _earliest_first(targets, [results[i] for i in idx])
    return cov


def _sharpenings(result: TargetResult) -> list:
    if result.status != "failed" or result.failure.explanation is None:
        return []
    return [n for n in result.failure.explanation.notes if isinstance(n, sharpening.Sharpening)]


def _one_factor(results: list[TargetResult]) -> None:
    """Where one sharpness alone fixes several failing targets, every one of them says the largest factor: the one
    that makes them all pass (following a smaller one would leave the others failing)."""
    import dataclasses

    notes = [n for r in results for n in _sharpenings(r)]
    most = {}
    for n in notes:
        most[n.names] = max(most.get(n.names, n.factor), n.factor)
    for r in results:
        e = r.failure.explanation if r.status == "failed" else None
        if e is not None:
            e.notes = [
                dataclasses.replace(n, factor=most[n.names]) if isinstance(n, sharpening.Sharpening) else n
                for n in e.notes
            ]


def _true_scale(attempt, model, probe: list[Tokens]) -> None:
    """One CircuitError line where the puzzle's sharpness is not one factor on every score the answer writes, or
    a larger one breaks it."""
    limits.doing("checking that the sharpness is a scale")
    said = scale.not_a_scale(attempt, model, probe, evaluate, guarantees.reference_attention(attempt))
    if said is not None:
        raise CircuitError(said)


def _size_sharpening(attempt, target, f: Failure, batch: list[Tokens], max_len: int) -> None:
    """Where raising the puzzle's sharpness alone fixes the failing target, say by how much for every input checked
    (the failing one at its full length included): in the hint's own factor, else as a note after it."""
    e = f.explanation
    said = sharpening.sizing(attempt, target, e.hint, e.terms, [f.tokens, *batch], evaluate, max_len)
    if said is not None:
        said = _mechanisms_hold_too(attempt, said)
        e.notes.append(said)  # display says it in the hint's own factor where the hint names one


def _mechanisms_hold_too(attempt, said):
    """The factor raised until the puzzle's mechanism targets pass too (×1.25 a step, then narrowed to within 3 %):
    a patched input can need more sharpness than the behaviour's own, and a factor said must fix what it names
    without a new failure."""
    import copy
    import dataclasses

    from circuits.checking.margins import scaled

    mechanisms = [t for t in attempt.puzzle.targets if t.kind is Kind.MECHANISM]

    def holds(factor: float) -> bool:
        trial = copy.copy(attempt)
        trial.answer = scaled(attempt.answer, said.names, factor)
        model = trial.model()
        return all(check_mechanism(t, trial, model).status == "passed" for t in mechanisms)

    try:
        if not mechanisms or holds(said.factor):
            return said
        low, high = said.factor, said.factor * 1.25
        while not holds(high):
            if high > sharpening.TOP:
                return said
            low, high = high, high * 1.25
        for _ in range(3):
            mid = (low * high) ** 0.5
            low, high = (low, mid) if holds(mid) else (mid, high)
    except CircuitError:
        return said
    return dataclasses.replace(said, factor=sharpening.rounded_up(high))


def _earliest_first(targets: Sequence[Target], results: list[TargetResult]) -> None:
    """Later failures may only echo the earliest one in the circuit (layer order, then the puzzle's): say so
    where the later target reads what the earlier one failed to make (a later layer, or the same head)."""
    failed = [n for n, r in enumerate(results) if r.status == "failed" and r.failure.explanation is not None]
    if len(failed) < 2:
        return
    first = min(failed, key=lambda n: (targets[n].stage, n))
    label = results[first].label
    for n in failed:
        same_head = results[n].failure.explanation.head == results[first].failure.explanation.head is not None
        same_fix = bool(  # one sharpness fixes both: the factor each says is the same
            {x.names for x in _sharpenings(results[n])} & {x.names for x in _sharpenings(results[first])}
        )
        if n != first and (targets[n].stage > targets[first].stage or same_head) and not same_fix:
            results[n].failure.explanation.notes.append(EarlierFailure(label))


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


def code_verdict(target: Code, answer, example) -> object | None:
    """None when the learner's code agrees with the library's on `example`, else the facts of why not (or the
    puzzle's own compare's sentence)."""
    try:
        return target.compare(answer, example)
    except Exception as e:  # noqa: BLE001 - the learner's code raising is a finding, not a crash
        from circuits.checking.validate import code_mistake

        return code_mistake(e, answer)  # the learner's function, or the puzzle's own compare


def _code_settings(n_examples: int, shrink: bool = True):
    from hypothesis import HealthCheck, Phase, settings

    phases = [p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain)]
    return settings(
        max_examples=n_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )


def code_inputs(target: Code, n_examples: int = 100) -> list:
    """The inputs a code target is checked on: its worked examples, then every input its property test draws
    while nothing fails (derandomized, so the same list each time). Any code that agrees on all of them gets
    check's verdict, passed; code that disagrees on one fails there too (unshrunk), so a grader that runs the
    learner's code elsewhere can judge its outputs on exactly these. The target's first cases (searched_with) come
    between, as check tries them: a mistake is found on the same input both ways."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    drawn: list = []

    def record(example) -> bool:
        drawn.append(example)
        return False

    try:
        with _hypothesis_stores_nothing_here():
            find(target.strategy(), record, settings=_code_settings(n_examples))
    except (NoSuchExample, Unsatisfiable):
        pass
    return [*target.examples, *target.first_cases(), *drawn]


def check_code_on(target: Code, answer, inputs: Sequence) -> TargetResult:
    """A code target's verdict on `inputs` (from code_inputs): failed at the first one compare rejects."""
    for n, example in enumerate(inputs):
        if (found := code_verdict(target, answer, example)) is not None:
            stage = STAGES[0] if n < len(target.examples) else STAGES[3]
            return TargetResult(target.label, Kind.CODE, "failed", failure=Failure(stage, [], 0, finding=found))
    return TargetResult(target.label, Kind.CODE, "passed", checked=len(inputs))


SHRINK_CALLS = 2_000  # the most times a shrink runs the learner's code (each run ~1 ms for puzzle 00's): a count,
# not a clock, so the input reported never depends on how busy the machine is


def shrunk(example, fails: Callable[[object], bool], smaller: Callable[[object], Iterator], budget: int = SHRINK_CALLS):
    """Greedy, deterministic shrinking of a code target's failing input: the first simpler input (`smaller`, simplest
    first) that still fails, again and again, until none does or `budget` runs of the learner's code are spent."""
    runs = 0
    while runs < budget:
        for candidate in smaller(example):
            runs += 1
            if fails(candidate):
                example = candidate
                break
            if runs >= budget:
                break
        else:
            return example
    return example


def check_code(target: Code, attempt, n_examples: int) -> TargetResult:
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    def why(example):
        return code_verdict(target, attempt.answer, example)

    def failed(stage: str, found) -> TargetResult:
        return TargetResult(target.label, Kind.CODE, "failed", failure=Failure(stage, [], 0, finding=found))

    for ex in target.examples:
        if (found := why(ex)) is not None:
            return failed(STAGES[0], found)
    if n_examples <= 0:  # the property test was turned off: the worked examples are the whole check
        return TargetResult(target.label, Kind.CODE, "passed", checked=len(target.examples))
    for ex in target.first_cases():  # where the search would shrink a classic mistake to, tried before it
        if (found := why(ex)) is not None:
            return failed(STAGES[3], found)
    fails = lambda e: why(e) is not None  # noqa: E731
    try:  # hypothesis finds a failing input; the target's own shrink (cheap, bounded) makes it short, where it has one
        with _hypothesis_stores_nothing_here():
            ex = find(target.strategy(), fails, settings=_code_settings(n_examples, shrink=target.smaller is None))
    except NoSuchExample:
        return TargetResult(target.label, Kind.CODE, "passed", checked=n_examples + len(target.examples))
    if target.smaller is not None:
        ex = shrunk(ex, fails, target.smaller)
    return failed(STAGES[3], why(ex))
