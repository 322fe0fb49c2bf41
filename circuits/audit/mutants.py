"""Mutation testing of the checker: small wrong edits of a reference answer, each of which the checker should reject.

A mutant that passes is either behaviourally equivalent (an entry multiplied by a zero) or a
wrong circuit the targets are too loose to catch; `run.audit` tells them apart by the rules that
prove an edit changes nothing (equivalence.py), then by a reviewed allow-list. This module makes
them (and the tolerance probes); run.py judges them.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from circuits.errors import CircuitError


@dataclass
class Mutant:
    """One wrong edit: `name` says what changed ("W_Q[0, consonant] × −1"), `answer` is the edited answer."""

    name: str
    answer: types.SimpleNamespace


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


def split_name(name: str) -> tuple[str, str]:
    """A mutant's name as (which entry, what change): "W_Q[0, a] × −1" -> ("W_Q[0, a]", "× −1")."""
    for pattern in (r"^(\S+\[[^\]]*\]) (.+)$", r"^(\S+): (.+)$", r"^(whole answer) (.+)$", r"^(\S+) (.+)$"):
        m = re.match(pattern, name)
        if m:
            return m.group(1), m.group(2)
    return name, ""


@functools.lru_cache(maxsize=8192)  # matches() asks it of every mutant for every allow-list entry
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
    p, match = _entry(pattern)
    shown = shown_name(name)
    return p == name or p == shown or match(name) is not None or match(shown) is not None


@functools.lru_cache(maxsize=8192)  # asked of every mutant: the entry stripped and compiled once
def _entry(pattern: str):
    """An allow-list entry stripped, and its fnmatch pattern's match (fnmatch.fnmatchcase's, made once)."""
    p = pattern.strip()
    return p, re.compile(fnmatch.translate(p)).match
