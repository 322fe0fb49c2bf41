"""An author's audit: the reference solution checked, then every mutant of it, with each survivor's closest call."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from circuits.checking.loader import Attempt
from circuits.io import paths
from circuits.checking.mutants import split_name  # noqa: F401  (part of audit's API)
from circuits.checking.plan import Plan
from circuits.errors import CircuitError

CLOSEST_RANDOM = 2000  # random inputs searched for a survivor's closest call, besides the examples and small inputs


@dataclass
class Survivor:
    name: str
    entry: str  # "W_Q[0, consonant]", or what the edit touched ("whole answer", "s")
    change: str  # "× −1", "0 → 10", "transposed"
    closest: str = ""  # the target and input where it came nearest to failing, with the value and the bound


@dataclass
class AuthorAudit:
    path: str
    result: object  # mutants.Audit
    survivors: list[Survivor] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # allow-list entries that no mutant needs

    def lines(self, verbose: bool = False) -> list[str]:
        r = self.result
        judged = len(r.killed) + len(r.survived)
        out = [f"{r.puzzle} · {self.path}",
               (f"mutants killed: {len(r.killed)}/{judged} ({r.kill_rate:.0%}); allowed as equivalent: {len(r.allowed)}; "
                f"{r.total} in all ({r.seconds:.1f} s)"), *r.notes()]
        if self.survivors:
            out += [f"survived, not in the allow-list ({len(self.survivors)}): a target is too loose, or the edit is",
                    "equivalent (then allow it, with the reason, in ALLOWED_MUTANTS)"]
            for s in self.survivors:
                out.append(f"  {s.entry}: {s.change}")
                if s.closest:
                    out += [f"    {line}" for line in s.closest.split("\n")]
        if verbose:
            for name, why in r.allowed:
                out += [f"  allowed: {name}", f"    {why}"]
        if self.stale:
            out.append(f"allow-list entries no mutant needs (remove them): {', '.join(self.stale)}")
        return out

    def to_json(self) -> dict:
        r = self.result
        return {"puzzle": r.puzzle, "file": self.path, "mutants": r.total, "killed": len(r.killed),
                "kill_rate": r.kill_rate, "allowed": [{"mutant": n, "why": w} for n, w in r.allowed],
                "survived": [{"mutant": s.name, "entry": s.entry, "change": s.change,
                              "closest_call": s.closest.replace("\n", " ")}
                             for s in self.survivors],
                "stale_allowed": self.stale, "seconds": round(r.seconds, 2),
                "mutants_made": r.made, "sampled": r.sampled, "not_run": r.not_run, "complete": r.complete}


def closest_call(attempt: Attempt, answer, plan: Plan | None = None) -> str:
    """The behaviour target and input on which a passing answer came nearest to failing; `plan` (made with
    CLOSEST_RANDOM random inputs) is shared by every survivor of an audit."""
    from circuits.checking import limits
    from circuits.checking.evaluation import evaluate

    puzzle = attempt.puzzle
    targets = [t for t in puzzle.targets if t.kind == "behaviour"]
    if not targets or puzzle.inputs is None:
        return ""
    model = attempt.model(answer)
    plan = plan or Plan.of(puzzle, CLOSEST_RANDOM)
    batch = plan.examples + plan.small(model, targets).inputs + plan.random
    _, worst = evaluate(model, targets, batch)  # [targets, inputs]
    slack = np.stack([t.slack(worst[i]) for i, t in enumerate(targets)])  # [targets, inputs]
    least = slack.min()
    i, j = min(zip(*np.nonzero(slack <= least + 1e-12)), key=lambda ij: (len(batch[ij[1]]), ij[1]))  # shortest first
    t = targets[i]
    shown = limits.shown_input(batch[j])
    shown = shown if len(shown) <= 32 else shown[:30] + "…'"
    return (f"closest call: on {shown}, {t.metric} {worst[i, j]:.4g} ({t.bound()})\n"
            f"in {limits.quoted(t.label, 70)}")


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
    raise CircuitError(f"{paths.shown(Path(path))} still has {', '.join(attempt.missing)} to fill in, and there is no "
                       f"solutions/{Path(path).name} beside it: audit the reference solution")


def run(attempt: Attempt, n_random: int | None = None) -> AuthorAudit:
    """Check the reference solution in full, then audit its mutants against the puzzle's allow-list."""
    from circuits.checking import limits
    from circuits.checking.allowed_mutants import allowed_for
    from circuits.checking.checker import check, context
    from circuits.checking.mutants import FAST_RANDOM, audit, matches

    shown = paths.shown(attempt.path)
    result = check(attempt, margins=False)
    if result.status != "solved":
        bad = next((t for t in result.targets if t.status in ("failed", "error")), None)
        why = (str(bad.error) if bad.error is not None else f"fails: {bad.label}") if bad is not None else result.status
        raise CircuitError(f"{shown}: the reference solution does not pass its own check ({why}); "
                           f"run `circuits check {shown}` first")
    allowed = allowed_for(attempt)
    budget = limits.seconds("audit")
    start = time.perf_counter()
    r = audit(attempt, allowed, n_random or FAST_RANDOM, seconds=budget)
    by_name = _answers(attempt)
    stale = [p for p, _ in allowed if not any(matches(n, p) for n, _ in r.allowed)] if r.complete and not r.sampled else []
    out = AuthorAudit(shown, r, stale=stale)
    plan = Plan.of(attempt.puzzle, CLOSEST_RANDOM)
    with context():
        for name in r.survived:
            entry, change = split_name(name)
            closest = ""
            if time.perf_counter() - start <= budget:  # each closest call is a search: only while time is left
                try:
                    closest = closest_call(attempt, by_name[name], plan)
                except CircuitError as e:
                    closest = str(e)
            out.survivors.append(Survivor(name, entry, change, closest))
    return out


def _answers(attempt) -> dict[str, object]:
    """Each mutant's and each tolerance probe's answer, by the name the audit reports it under."""
    from circuits.checking.mutants import Numbers, mutants, tolerance_probes

    out = {m.name: m.answer for m in mutants(copy.copy(attempt))}
    for name, _, matrix_name, (small, _) in tolerance_probes(attempt, Numbers()):
        out[name] = copy.copy(attempt.answer)
        setattr(out[name], matrix_name, small)
    return out
