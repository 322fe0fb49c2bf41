"""Running the mutants (mutants.py makes them): the audit's fast check of each (`rejects`), the rules and the
allow-list that spare an equivalent one, and the full check that confirms a survivor. Used by tests/test_mutants.py
and `circuits audit` (author.py).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.audit.mutants import Mutant, Numbers, matches, mutants, tolerance_probes
from circuits.checking.plan import Plan
from circuits.errors import CircuitError
from circuits.model.weights import same_objects
from circuits.targets.base import Kind

FAST_RANDOM = 1000  # random inputs in the fast check; a survivor is confirmed by the full check
# At most this many mutants are audited: beyond it, a fixed sample of the matrix edits (the whole-answer and symbol
# edits always run). Every shipped puzzle has fewer (puzzle 08 has 976); a d_head of 300 makes thousands.
MAX_MUTANTS = 1000


@dataclass
class Audit:
    puzzle: str
    killed: list[str] = field(default_factory=list)
    allowed: list[tuple[str, str]] = field(default_factory=list)  # (mutant, the allow-list's reason)
    spared: list[tuple[str, str]] = field(default_factory=list)  # (mutant, the rules that prove it equivalent)
    survived: list[str] = field(default_factory=list)  # passed the full check and no reason allows it
    seconds: float = 0.0
    made: int = 0  # mutants of the answer; more than were run when sampled
    not_run: int = 0  # of those sampled, left unjudged when the time budget ran out
    budget: float | None = None  # the time budget, in seconds, when it ran out

    @property
    def sampled(self) -> bool:
        return self.made > self.total + self.not_run

    @property
    def complete(self) -> bool:
        return self.not_run == 0

    @property
    def total(self) -> int:
        return len(self.killed) + len(self.allowed) + len(self.spared) + len(self.survived)

    @property
    def kill_rate(self) -> float:
        """Killed among the mutants not allowed as equivalent."""
        judged = len(self.killed) + len(self.survived)
        return len(self.killed) / judged if judged else 1.0


FIRST = 100  # random inputs tried before the exhaustive small inputs: most mutants fail on a few


def rejects(
    attempt, answer, n_random: int = FAST_RANDOM, numbers: Numbers | None = None, plan: Plan | None = None
) -> bool:
    """Whether the checker rejects `answer`: the full check's stages in order, stopping at the first failure,
    without margins, shrinking or the property test (a mutant this lets through is re-checked in full).

    Cheapest first: the worked examples, a few random inputs, then every small input and the rest. `plan`
    (made with `n_random` random inputs) is shared by every mutant of an audit."""
    from circuits.checking import checker, guarantees
    from circuits.checking.checker import declares_sharpness
    from circuits.checking.evaluation import evaluate

    trial = copy.copy(attempt)
    trial.answer = answer
    puzzle = attempt.puzzle
    model = None
    if puzzle.build is not None:
        try:
            declares_sharpness(trial)
            model = attempt.model(numbers.answer(attempt, answer) if numbers is not None else answer)
            writes = guarantees.writes_for(attempt)  # the guarantees the full check holds every answer to
            if writes:
                guarantees.check_writes(model, writes, "")
            reads = guarantees.reads_for(attempt)
            if reads:
                guarantees.check_reads(model, reads, "")
        except CircuitError:
            return True

    def alone_fails(last: bool) -> bool:
        for t in puzzle.targets:
            alone = checker.check_alone(t, trial, model, 100) if t.checked_last == last else None
            if alone is not None and alone.status != "passed":  # None: a behaviour target, run on the plan below
                return True
        return False

    if alone_fails(False):
        return True
    behaviour = [t for t in puzzle.targets if t.kind is Kind.BEHAVIOUR]
    if not behaviour:
        return alone_fails(True)
    plan = plan or Plan.of(puzzle, n_random, guarantees.spanning(puzzle.inputs, model))
    fails = lambda batch: bool(batch) and not evaluate(model, behaviour, batch)[0].all()  # noqa: E731
    try:
        if fails(plan.examples) or fails(plan.sample[:FIRST]):
            return True
        if fails(plan.small(model, behaviour).inputs) or fails(plan.sample[FIRST:] + plan.extremes):
            return True
    except CircuitError:
        return True
    return alone_fails(True) or not_a_true_scale(trial, model, plan)


def not_a_true_scale(trial, model, plan: Plan) -> bool:
    """Whether a passing answer's sharpness is not a true scale (checking/scale.py) on the checker's probe batch: an
    allowed mutant is held to it too, as the full check holds the others (a dead sharpness is left to that check)."""
    from circuits.checking import guarantees, scale
    from circuits.checking.evaluation import evaluate

    return scale.not_a_scale(trial, model, plan.probe, evaluate, guarantees.reference_attention(trial)) is not None


def passes_in_full(attempt, answer) -> bool:
    """The full check, as a learner would run it (margins aside)."""
    from circuits.checking.checker import check

    trial = copy.copy(attempt)
    trial.answer = answer
    return check(trial, margins=False).status == "solved"


def sampled(made: list[Mutant], n: int = MAX_MUTANTS, seed: int = 0) -> list[Mutant]:
    """`made` if it has at most n mutants, else n of them in their order: every whole-answer and symbol edit, and a
    fixed random sample (by `seed`) of the matrix edits."""
    if len(made) <= n:
        return made
    always = [i for i, m in enumerate(made) if " × " in m.name and "[" not in m.name]  # whole answer, params
    rest = [i for i in range(len(made)) if i not in set(always)]
    picked = np.random.default_rng(seed).choice(len(rest), size=max(0, n - len(always)), replace=False)
    keep = set(always) | {rest[int(j)] for j in picked}
    return [m for i, m in enumerate(made) if i in keep]


def audit(
    attempt,
    allowed: Sequence[tuple[str, str]] = (),
    n_random: int = FAST_RANDOM,
    seconds: float | None = None,
    workers: int = 1,
) -> Audit:
    """Run every mutant (a sample beyond MAX_MUTANTS), then the tolerance probes, for at most `seconds` (None: no
    limit), on `workers` processes (checking/cores.py: the same verdicts, in the same order, as on one); `allowed` is
    (a mutant's name or an fnmatch pattern, why it is equivalent). A mutant that passes is spared when a rule proves
    it equivalent (audit/equivalence.py), before the allow-list is read."""
    from circuits.audit.equivalence import Judge
    from circuits.checking import cores, guarantees
    from circuits.checking.checker import context

    start = time.perf_counter()
    result = Audit(attempt.puzzle.id)
    numbers = Numbers()
    made = mutants(attempt)
    chosen = sampled(made, seed=sum(attempt.puzzle.id.encode()))
    result.made = len(made)
    # the same inputs for every mutant, made once (reaching the model's n_ctx, as the checker's do)
    model = attempt.model() if attempt.puzzle.build is not None else None
    plan = Plan.of(attempt.puzzle, n_random, guarantees.spanning(attempt.puzzle.inputs, model))
    judge = Judge(attempt, plan.examples + plan.sample[:FIRST]) if model is not None else None

    def verdict(m: Mutant) -> tuple[str, str]:
        """("killed" | "spared" | "allowed" | "survived", the rules or the reason)."""
        if rejects(attempt, m.answer, n_random, numbers, plan):
            return KILLED, ""
        # proved equivalent from the weights: neither the allow-list nor the full check is needed
        rules = SHARPER if sharper(attempt, m.name) else judge(m.answer, numbers) if judge is not None else None
        if rules is not None:
            return SPARED, rules
        reason = next((why for pattern, why in allowed if matches(m.name, pattern)), None)
        if reason is not None:  # reviewed as equivalent: the full check is not needed to judge it
            return ALLOWED, reason
        return (SURVIVED, "") if passes_in_full(attempt, m.answer) else (KILLED, "")

    # as a check runs: specs computed once per input (here across mutants), BLAS on one thread; and the matrices no
    # mutant edits (the givens, the answer's others: the same objects for every mutant) converted once
    with context(), same_objects():
        if workers > 1 and chosen:  # the copies start from the reference's specs, not each computing them anew
            rejects(attempt, attempt.answer, n_random, numbers, plan)
        until = None if seconds is None else start + seconds
        verdicts = cores.forked(verdict, chosen, workers, until)
        for n, (m, v) in enumerate(zip(chosen, verdicts)):
            if v is None:  # out of time: this one and every later one count as not run, as on one process
                result.not_run, result.budget = len(chosen) - n, seconds
                break
            _record(result, m.name, v)
        if not result.not_run:
            _probe(attempt, allowed, n_random, numbers, plan, result, workers)
    result.seconds = time.perf_counter() - start
    return result


KILLED, SPARED, ALLOWED, SURVIVED = "killed", "spared", "allowed", "survived"
SHARPER = "sharper"  # the rule that spares a puzzle's own sharpness symbol scaled up


def sharper(attempt, name: str) -> bool:
    """`s × 10` for the puzzle's sharpness symbol s: an answer the worksheet asks for too (every passing answer must
    hold at 3× to 100× its sharpness: checking/scale.py), so never a wrong circuit that passes."""
    symbols = [k for k in attempt.puzzle.sharpness if k not in (*attempt.puzzle.answer, *attempt.puzzle.optional)]
    return any(name == f"{k} × 10" for k in symbols)


def _probe(attempt, allowed, n_random: int, numbers: Numbers, plan: Plan, result: Audit, workers: int = 1) -> None:
    """The tolerance probes (tolerance_probes, above): a small bias on one row of a matrix that writes, killed, allowed
    because the same row's large bias passes too (nothing reads it), or a survivor: a target that is too loose."""
    from circuits.checking import cores

    def verdict(probe) -> tuple[str, str]:
        name, twin, matrix_name, (small, large) = probe
        answer = copy.copy(attempt.answer)
        setattr(answer, matrix_name, small)
        if rejects(attempt, answer, n_random, numbers, plan):
            return KILLED, ""
        reason = next((why for pattern, why in allowed if matches(name, pattern)), None)
        if reason is None:
            loud = copy.copy(attempt.answer)
            setattr(loud, matrix_name, large)
            if not rejects(attempt, loud, n_random, numbers, plan):
                reason = f"equivalent: {twin.removesuffix(' (large twin)')} passes too, so no target reads that row"
        if reason is not None:
            return ALLOWED, reason
        return (SURVIVED, "") if passes_in_full(attempt, answer) else (KILLED, "")

    probes = list(tolerance_probes(attempt, numbers))
    for probe, v in zip(probes, cores.forked(verdict, probes, workers)):
        _record(result, probe[0], v)


def _record(result: Audit, name: str, verdict: tuple[str, str]) -> None:
    kind, why = verdict
    if kind == KILLED:
        result.killed.append(name)
    elif kind == SURVIVED:
        result.survived.append(name)
    else:
        (result.spared if kind == SPARED else result.allowed).append((name, why))
