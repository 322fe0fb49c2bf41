"""An author's audit: the reference solution checked, then every mutant of it, with each survivor's closest call."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from circuits.audit.mutants import split_name  # noqa: F401  (part of audit's API)
from circuits.checking.loader import Attempt
from circuits.checking.plan import Plan
from circuits.errors import CircuitError
from circuits.io import paths
from circuits.targets.base import Kind

CLOSEST_RANDOM = 2000  # random inputs searched for a survivor's closest call, besides the examples and small inputs


@dataclass(frozen=True)
class Closest:
    """Where a passing answer came nearest to failing: the target, the input, its metric's value and the bound."""

    label: str
    tokens: tuple[str, ...]
    metric: str
    value: float
    bound: str  # as the target states it: "tolerance 1", "needs ≥ 0.9"


@dataclass
class Survivor:
    name: str
    entry: str  # "W_Q[0, consonant]", or what the edit touched ("whole answer", "s")
    change: str  # "× −1", "0 → 10", "transposed"
    allow: str = ""  # its allow-list entry, as printed: "W_Q[[]0, consonant]: × −1" matches this mutant only
    closest: Closest | None = None
    error: CircuitError | None = None  # why the closest call could not be found


@dataclass
class AuthorAudit:
    """An audit's facts; display.words.audit_lines words them, display.json.audit_json gives them as JSON."""

    path: str
    result: object  # run.Audit
    survivors: list[Survivor] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # allow-list entries that match only mutants the check kills
    covered: list[str] = field(default_factory=list)  # allow-list entries whose mutants a rule spares (equivalence.py)
    unmatched: list[str] = field(default_factory=list)  # allow-list entries that match no mutant of the answer at all
    mechanisms: list[tuple[str, object]] = field(default_factory=list)  # (label, Interventions) the reference passes


def closest_call(attempt: Attempt, answer, plan: Plan | None = None) -> Closest | None:
    """The behaviour target and input on which a passing answer came nearest to failing; `plan` (made with
    CLOSEST_RANDOM random inputs) is shared by every survivor of an audit."""
    from circuits.checking.evaluation import evaluate

    puzzle = attempt.puzzle
    targets = [t for t in puzzle.targets if t.kind is Kind.BEHAVIOUR]
    if not targets or puzzle.inputs is None:
        return None
    model = attempt.model(answer)
    plan = plan or Plan.of(puzzle, CLOSEST_RANDOM)
    batch = plan.examples + plan.small(model, targets).inputs + plan.random
    _, worst = evaluate(model, targets, batch)  # [targets, inputs]
    slack = np.stack([t.slack(worst[i]) for i, t in enumerate(targets)])  # [targets, inputs]
    least = slack.min()
    i, j = min(zip(*np.nonzero(slack <= least + 1e-12)), key=lambda ij: (len(batch[ij[1]]), ij[1]))  # shortest first
    t = targets[i]
    return Closest(t.label, tuple(batch[j]), t.metric, float(worst[i, j]), t.bound())


def reference(path) -> Attempt:
    """The reference solution at `path`, or its twin in solutions/ when `path` is an unfilled puzzle file."""
    from pathlib import Path

    from circuits.checking.loader import reference_for
    from circuits.checking.pipeline import load

    attempt = load(path)
    if attempt.attempted:
        return attempt
    twin = reference_for(path)
    if twin is not None and twin.is_file():
        return load(twin)
    raise CircuitError(
        f"{paths.shown(Path(path))} still has {', '.join(attempt.missing)} to fill in, and there is no "
        f"solutions/{Path(path).name} beside it: audit the reference solution"
    )


def run(attempt: Attempt, n_random: int | None = None, workers: int = 1) -> AuthorAudit:
    """Check the reference solution in full, then audit its mutants against the puzzle's allow-list, on `workers`
    processes."""
    from circuits import limits
    from circuits.audit.allowed_mutants import allowed_for
    from circuits.audit.mutants import allow_entry, matches
    from circuits.audit.run import FAST_RANDOM, audit
    from circuits.checking.checker import check, context

    shown = paths.shown(attempt.path)
    result = check(attempt, margins=False)
    if result.status != "solved":
        bad = next((t for t in result.targets if t.status in ("failed", "error")), None)
        why = (str(bad.error) if bad.error is not None else f"fails: {bad.label}") if bad is not None else result.status
        raise CircuitError(
            f"{shown}: the reference solution does not pass its own check ({why}); run `circuits check {shown}` first"
        )
    allowed = allowed_for(attempt)
    budget = limits.seconds("audit")
    start = time.perf_counter()
    r = audit(attempt, allowed, n_random or FAST_RANDOM, seconds=budget, workers=workers)
    by_name = _answers(attempt)
    # every mutant and probe the answer has, run or not (sampled, or out of time): an entry matching none is a typo
    unmatched = [p for p, _ in allowed if not any(matches(n, p) for n in by_name)]
    stale = (
        [p for p, _ in allowed if p not in unmatched and not any(matches(n, p) for n, _ in r.allowed)]
        if r.complete and not r.sampled
        else []
    )
    covered = [p for p in stale if any(matches(n, p) for n, _ in r.spared)]
    stale = [p for p in stale if p not in covered]
    tried = [(t.label, t.interventions) for t in result.targets if t.interventions is not None]
    out = AuthorAudit(shown, r, stale=stale, covered=covered, unmatched=unmatched, mechanisms=tried)
    plan = Plan.of(attempt.puzzle, CLOSEST_RANDOM)
    with context():
        for name in r.survived:
            entry, change = split_name(name)
            closest, error = None, None
            if time.perf_counter() - start <= budget:  # each closest call is a search: only while time is left
                try:
                    closest = closest_call(attempt, by_name[name], plan)
                except CircuitError as e:
                    error = e
            out.survivors.append(Survivor(name, entry, change, allow_entry(name), closest, error))
    return out


def _answers(attempt) -> dict[str, object]:
    """Each mutant's and each tolerance probe's answer, by the name the audit reports it under."""
    from circuits.audit.mutants import Numbers, mutants, tolerance_probes

    out = {m.name: m.answer for m in mutants(copy.copy(attempt))}
    for name, _, matrix_name, (small, _) in tolerance_probes(attempt, Numbers()):
        out[name] = copy.copy(attempt.answer)
        setattr(out[name], matrix_name, small)
    return out
