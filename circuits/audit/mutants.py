"""Mutation testing of the checker: small wrong edits of a reference answer, each of which the checker should reject.

A mutant that passes is either behaviourally equivalent (an entry multiplied by a zero) or a
wrong circuit the targets are too loose to catch; `audit` tells them apart by the rules that prove
an edit changes nothing (checking/equivalence.py), then by a reviewed allow-list. Used by
tests/test_mutants.py and `circuits audit`.
"""

from __future__ import annotations

import copy
import fnmatch
import re
import time
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.checking.plan import Plan
from circuits.checking.targets.base import Kind
from circuits.errors import CircuitError

FAST_RANDOM = 1000  # random inputs in the fast check; a survivor is confirmed by the full check
# At most this many mutants are audited: beyond it, a fixed sample of the matrix edits (the whole-answer and symbol
# edits always run). Every shipped puzzle has fewer (puzzle 08 has 976); a d_head of 300 makes thousands.
MAX_MUTANTS = 1000


@dataclass
class Mutant:
    """One wrong edit: `name` says what changed ("W_Q[0, consonant] × −1"), `answer` is the edited answer."""

    name: str
    answer: types.SimpleNamespace


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


# --- mutants of matrices ---------------------------------------------------------------------------------------
def _labels(value, shape) -> tuple[list[str], list[str]]:
    rows = getattr(getattr(value, "rows", None), "labels", None) or [str(i) for i in range(shape[0])]
    cols = getattr(getattr(value, "cols", None), "labels", None) or [str(j) for j in range(shape[1])]
    return [str(r) for r in rows], [str(c) for c in cols]


def _with(value, raw: np.ndarray):
    """The same kind of matrix as `value` (named matrices keep their labels) holding `raw`."""
    from circuits.model.basis import NamedMatrix

    if isinstance(value, NamedMatrix) and raw.shape == value.shape:
        return NamedMatrix(value.rows, value.cols, raw)
    return raw


def _is_zero(x) -> bool:
    try:
        return bool(x == 0)
    except TypeError:
        return False


def zero_entries_to_fill(raw: np.ndarray) -> list[tuple[int, int]]:
    """Zero entries that get a 1: one in every row and one in every column that has a zero (not all of them).

    A 1 at (r, c) reads input direction c into output r. Covering every row and every column
    exercises every direction a matrix could wrongly read and every output it could wrongly write,
    in rows + columns mutants instead of rows × columns (27 × 79 for puzzle 08's W_Q).
    """
    zero = np.vectorize(_is_zero, otypes=[bool])(raw)
    picked: list[tuple[int, int]] = []
    for r in range(raw.shape[0]):  # each row's first zero after its diagonal, so rows spread over columns
        cols = np.flatnonzero(zero[r])
        if len(cols):
            picked.append((r, int(cols[np.searchsorted(cols, r % raw.shape[1]) % len(cols)])))
    for c in range(raw.shape[1]):
        if any(pc == c for _, pc in picked):
            continue
        rows = np.flatnonzero(zero[:, c])
        if len(rows):
            picked.append((int(rows[c % len(rows)]), c))
    return sorted(set(picked))


def largest_entry(raw: np.ndarray, params) -> object:
    """The entry of largest size once symbols are bound (1 for an all-zero matrix): what a wrong entry looks like.

    A literal 1 beside entries of s = 30 is a 3% nudge that a circuit with any margin shrugs off, which
    says nothing about the checker; an entry as large as the matrix's own ones is a real wrong reading.
    """
    from circuits.model.weights import matrix

    try:
        numbers = np.abs(matrix(raw, "a mutant", (None, None), params=params))
    except (CircuitError, TypeError, ValueError):
        return 1
    if not numbers.any():
        return 1
    r, c = np.unravel_index(int(np.argmax(numbers)), numbers.shape)
    return raw[r, c] if numbers[r, c] > 0 else 1


def matrix_mutants(name: str, value, params=None) -> Iterator[tuple[str, object]]:
    """(description, mutated matrix) for one answer matrix; edits that change nothing are left out."""
    from circuits.model.weights import raw_array as _raw

    raw = np.array(_raw(value), dtype=object)
    if raw.ndim != 2:
        return
    big = largest_entry(raw, params)
    rows, cols = _labels(value, raw.shape)
    at = lambda r, c: f"{name}[{rows[r]}, {cols[c]}]"  # noqa: E731
    for r, c in zip(*np.nonzero(~np.vectorize(_is_zero, otypes=[bool])(raw))):
        for what, new in (("× −1", -raw[r, c]), ("→ 0", 0)):
            m = raw.copy()
            m[r, c] = new
            yield f"{at(r, c)} {what}", _with(value, m)
    for r, c in zero_entries_to_fill(raw):
        m = raw.copy()
        m[r, c] = big
        yield f"{at(r, c)} 0 → {big}", _with(value, m)
    if raw.shape[0] == raw.shape[1] and not _same(raw, raw.T):
        yield f"{name} transposed", _with(value, raw.T.copy())
    for r in range(raw.shape[0] - 1):
        m = raw.copy()
        m[[r, r + 1]] = m[[r + 1, r]]
        if not _same(m, raw):
            yield f"{name} rows {rows[r]} ↔ {rows[r + 1]}", _with(value, m)
    for c in range(raw.shape[1] - 1):
        m = raw.copy()
        m[:, [c, c + 1]] = m[:, [c + 1, c]]
        if not _same(m, raw):
            yield f"{name} columns {cols[c]} ↔ {cols[c + 1]}", _with(value, m)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and all(x == y for x, y in zip(a.flat, b.flat))


def _scaled(value, factor):
    from circuits.model.weights import raw_array as _raw

    return _with(value, np.array(_raw(value), dtype=object) * factor)


# --- mutants of code (puzzle 00) --------------------------------------------------------------------------------
def _mask_off_by_one(T):
    return np.tril(np.ones((T, T), dtype=bool), 1)


def _mask_strict(T):
    return np.tril(np.ones((T, T), dtype=bool), -1)


def _attention_with(axis: int = -1, subtract_max: bool = True, mask_after: bool = False) -> Callable:
    """The reference attention with one classic mistake."""

    def attention(Q, K, V, mask=None):  # [b, q, d], [b, k, d], [b, k, d_v], [b, q, k]
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # [b, q, k]
        if mask is not None and not mask_after:
            scores = np.where(mask, scores, -np.inf)
        top = scores.max(axis, keepdims=True) if subtract_max else np.zeros_like(scores[..., :1])
        with np.errstate(all="ignore"):
            weights = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
            total = weights.sum(axis, keepdims=True)
            A = weights / np.where(total > 0, total, 1.0)
        if mask is not None and mask_after:
            A = np.where(mask, A, 0.0)
        return A, A @ V

    return attention


CODE_MUTANTS: dict[str, dict[str, Callable]] = {
    "causal_mask": {"mask off by one (j ≤ i + 1)": _mask_off_by_one, "mask off by one (j < i)": _mask_strict},
    "attention": {
        "softmax over the query axis": _attention_with(axis=-2),
        "no max-subtraction": _attention_with(subtract_max=False),
        "mask applied after the softmax": _attention_with(mask_after=True),
    },
}


# --- all mutants of an answer -------------------------------------------------------------------------------------
def mutants(attempt) -> list[Mutant]:
    """Every mutant of the attempt's answer, in a fixed order with unique names."""
    answer = attempt.answer
    out: list[Mutant] = []

    def edited(**changes) -> types.SimpleNamespace:
        new = copy.copy(answer)
        for k, v in changes.items():
            setattr(new, k, v)
        return new

    names = [n for n in attempt.puzzle.answer if n != "params"]
    for name in names:
        value = getattr(answer, name)
        if callable(value):
            out += [Mutant(f"{name}: {what}", edited(**{name: fn})) for what, fn in CODE_MUTANTS.get(name, {}).items()]
            continue
        out += [Mutant(what, edited(**{name: m})) for what, m in matrix_mutants(name, value, answer.params)]
    matrices = [n for n in names if not callable(getattr(answer, n))]
    if matrices:
        for factor in (0.1, 10):
            out.append(
                Mutant(
                    f"whole answer × {factor:g}", edited(**{n: _scaled(getattr(answer, n), factor) for n in matrices})
                )
            )
    for key, bound in dict(getattr(answer, "params", None) or {}).items():
        for factor in (0.1, 10):
            out.append(Mutant(f"{key} × {factor:g}", edited(params={**answer.params, key: bound * factor})))
    return out


# --- tolerance probes ----------------------------------------------------------------------------------------------
# Tolerance probes for the audit: answers just outside what a target should tolerate.
#
# The audit's other mutants are large edits (an entry negated, zeroed, filled with the matrix's largest). A target
# can kill every one of them and still be loose enough to admit a small wrong write: a bias a little larger than
# its tolerance in a row of a matrix that writes what the targets read (W_V, W_O, W_out, W_U). Each probe adds such
# a bias to one row; it comes with a twin adding a large bias to the same row. When the large twin passes too, the
# row is read by nothing the puzzle asks about and the probe is equivalent (allowed, saying so); when only the small
# probe passes, a target tolerates a wrong write of that size, and the audit reports it to the author.
WRITERS = ("W_V", "W_O", "W_out", "W_U")  # answer matrices whose entries reach a readout linearly
MAX_ROWS = 16  # rows probed per matrix; beyond, an even spread of them
SUFFIX = "(tolerance probe)"
LARGE = "(large twin)"


def probe_size(puzzle) -> float:
    """The probe's bias: 1.5 × the smallest tolerance among the targets that have one, else 0.25 (a quarter logit
    or a quarter of a unit of attention-weighted value)."""
    tols = [t.tolerance for t in puzzle.targets if t.tolerance is not None]
    return 1.5 * min(tols) if tols else 0.25


def tolerance_probes(attempt, numbers) -> Iterator[tuple[str, str, str, object]]:
    """(probe name, its large twin's name, answer name, (small matrix, large matrix)) for each probed row."""
    from circuits.model.weights import raw_array

    answer = attempt.answer
    delta = probe_size(attempt.puzzle)
    for name in attempt.puzzle.answer:
        value = getattr(answer, name, None)
        if not name.startswith(WRITERS) or value is None or callable(value):
            continue
        raw = np.array(raw_array(value), dtype=object)  # symbols kept: the probe must not unbind the sharpness
        try:
            magnitude = np.abs(
                np.asarray(raw_array(numbers(name, value, getattr(answer, "params", None))), dtype=float)
            )
        except (TypeError, ValueError):
            continue  # not all numbers once bound: the other mutants cover it
        if raw.ndim != 2:
            continue
        rows, _ = _labels(value, raw.shape)
        big = 10 * max(1.0, float(magnitude.max()))
        picked = (
            range(raw.shape[0]) if raw.shape[0] <= MAX_ROWS else np.linspace(0, raw.shape[0] - 1, MAX_ROWS).astype(int)
        )
        for r in dict.fromkeys(int(r) for r in picked):
            small, large = raw.copy(), raw.copy()
            small[r] += delta
            large[r] += big
            yield (
                f"{name}[{rows[r]}, :] + {delta:g} {SUFFIX}",
                f"{name}[{rows[r]}, :] + {big:g} {LARGE}",
                name,
                (_with(value, small), _with(value, large)),
            )


# --- the fast check ---------------------------------------------------------------------------------------------
class Numbers:
    """Answer matrices bound to numbers once: a mutant edits one matrix, and the others need not be re-bound.

    Binding symbols (sympy) costs more than running a mutant on a thousand inputs, so the fast
    check builds each mutant's model from cached float copies of the matrices it did not edit.
    """

    def __init__(self):
        self._cache: dict[tuple, tuple[object, object]] = {}

    def __call__(self, name: str, value, params):
        from circuits.model.weights import matrix

        key = (id(value), tuple(sorted((str(k), float(v)) for k, v in dict(params or {}).items())))
        hit = self._cache.get(key)
        if hit is None or hit[0] is not value:
            try:
                numbers = _with(value, np.array(matrix(value, name, (None, None), params=params)))
            except (CircuitError, TypeError, ValueError):
                numbers = value  # the model's own build reports it
            hit = self._cache[key] = (value, numbers)
        return hit[1]

    def answer(self, attempt, answer) -> types.SimpleNamespace:
        """The answer with every matrix in numbers (and no params left to bind, when all of them bound)."""
        bound = copy.copy(answer)
        done = True
        for name in attempt.puzzle.answer:
            value = getattr(answer, name, None)
            if name != "params" and value is not None and not callable(value):
                numbers = self(name, value, getattr(answer, "params", None))
                setattr(bound, name, numbers)
                done = done and numbers is not value
        if done and getattr(answer, "params", None):
            bound.params = {}
        return bound


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


def split_name(name: str) -> tuple[str, str]:
    """A mutant's name as (which entry, what change): "W_Q[0, a] × −1" -> ("W_Q[0, a]", "× −1")."""
    for pattern in (r"^(\S+\[[^\]]*\]) (.+)$", r"^(\S+): (.+)$", r"^(whole answer) (.+)$", r"^(\S+) (.+)$"):
        m = re.match(pattern, name)
        if m:
            return m.group(1), m.group(2)
    return name, ""


def shown_name(name: str) -> str:
    """A mutant's name as the audit's survivor line words it, entry and change apart: "W_Q[0, a]: × −1"."""
    entry, change = split_name(name)
    return f"{entry}: {change}" if change else entry


def allow_entry(name: str) -> str:
    """The allow-list entry for exactly this mutant, as the audit prints a survivor: its shown name with fnmatch's
    metacharacters written literally ("W_Q[[]0, a]: × −1"), so that pasted into ALLOWED_MUTANTS it matches this
    mutant and no other."""
    return re.sub(r"[\[*?]", lambda m: f"[{m.group(0)}]", shown_name(name))


def matches(name: str, pattern: str) -> bool:
    """An allow-list entry names a mutant exactly, as its name or as the audit's survivor line shows it ("W_Q: columns
    0 ↔ 1", pasted), or is an fnmatch pattern over either form (write a literal [ as [[], as the audit does)."""
    p, shown = pattern.strip(), shown_name(name)
    return p in (name, shown) or fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(shown, p)


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
    attempt, allowed: Sequence[tuple[str, str]] = (), n_random: int = FAST_RANDOM, seconds: float | None = None
) -> Audit:
    """Run every mutant (a sample beyond MAX_MUTANTS), then the tolerance probes, for at most `seconds` (None: no
    limit); `allowed` is (a mutant's name or an fnmatch pattern, why it is equivalent). A mutant that passes is
    spared when a rule proves it equivalent (checking/equivalence.py), before the allow-list is read."""
    from circuits.audit.equivalence import Judge
    from circuits.checking import guarantees
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
    with context():  # as a check runs: specs computed once per input (here across mutants), BLAS on one thread
        for n, m in enumerate(chosen):
            if seconds is not None and time.perf_counter() - start > seconds:
                result.not_run, result.budget = len(chosen) - n, seconds
                break
            if rejects(attempt, m.answer, n_random, numbers, plan):
                result.killed.append(m.name)
                continue
            # proved equivalent from the weights: neither the allow-list nor the full check is needed
            rules = SHARPER if sharper(attempt, m.name) else judge(m.answer, numbers) if judge is not None else None
            if rules is not None:
                result.spared.append((m.name, rules))
                continue
            reason = next((why for pattern, why in allowed if matches(m.name, pattern)), None)
            if reason is not None:  # reviewed as equivalent: the full check is not needed to judge it
                result.allowed.append((m.name, reason))
            elif passes_in_full(attempt, m.answer):
                result.survived.append(m.name)
            else:
                result.killed.append(m.name)
        if not result.not_run:
            _probe(attempt, allowed, n_random, numbers, plan, result)
    result.seconds = time.perf_counter() - start
    return result


SHARPER = "sharper"  # the rule that spares a puzzle's own sharpness symbol scaled up


def sharper(attempt, name: str) -> bool:
    """`s × 10` for the puzzle's sharpness symbol s: an answer the worksheet asks for too (every passing answer must
    hold at 3× to 100× its sharpness: checking/scale.py), so never a wrong circuit that passes."""
    symbols = [k for k in attempt.puzzle.sharpness if k not in (*attempt.puzzle.answer, *attempt.puzzle.optional)]
    return any(name == f"{k} × 10" for k in symbols)


def _probe(attempt, allowed, n_random: int, numbers: Numbers, plan: Plan, result: Audit) -> None:
    """The tolerance probes (tolerance_probes, above): a small bias on one row of a matrix that writes, killed, allowed
    because the same row's large bias passes too (nothing reads it), or a survivor: a target that is too loose."""
    for name, twin, matrix_name, (small, large) in tolerance_probes(attempt, numbers):
        answer = copy.copy(attempt.answer)
        setattr(answer, matrix_name, small)
        if rejects(attempt, answer, n_random, numbers, plan):
            result.killed.append(name)
            continue
        reason = next((why for pattern, why in allowed if matches(name, pattern)), None)
        if reason is None:
            loud = copy.copy(attempt.answer)
            setattr(loud, matrix_name, large)
            if not rejects(attempt, loud, n_random, numbers, plan):
                reason = f"equivalent: {twin.removesuffix(' (large twin)')} passes too, so no target reads that row"
        if reason is not None:
            result.allowed.append((name, reason))
        elif passes_in_full(attempt, answer):
            result.survived.append(name)
        else:
            result.killed.append(name)
