"""The words of what a structure, code or mechanism target found: its rows (OV measurements) and its finding.

One function per kind of facts; the targets in checking/targets/ and checking/reference.py hold the numbers, and
nothing here computes a finding. A str is a puzzle's own words (a Structure's row label, an instructor's compare),
printed as written.
"""

from __future__ import annotations

import numpy as np

from circuits.checking import reference as ref
from circuits.checking.targets.code import YourCodeRaised
from circuits.checking.targets.depends import Interventions, Unbroken, Unfollowed
from circuits.checking.targets.ov import CopyingScore, RaisedMost, ScoreBound
from circuits.checking.targets.patched import PatchedMiss
from circuits.checking.targets.structure import AtMost, MatrixDiffers
from circuits.checking.targets.width import ValueRows, Width

FINDINGS: dict = {}  # type of a finding's (or a row's) facts → its words


def words(facts) -> str:
    """The words for one finding or row: a str as written (the puzzle's own), facts by their kind's function."""
    return facts if isinstance(facts, str) else FINDINGS[type(facts)](facts)


def expected_matrix(expected):
    """A structure row's expected side as a sympy matrix: a matrix as it is, a bound as the one symbol that says it."""
    import sympy

    return sympy.Matrix([[sympy.Symbol(words(expected))]]) if type(expected) in FINDINGS else expected


# --- structure and OV circuits -----------------------------------------------------------------------------------
def _head(head) -> str:
    return f"head {head[0]}.{head[1]}"


def _score_bound(f: ScoreBound) -> str:
    return " and ".join(
        b.replace("-", "−")
        for b in (
            f"≥ {f.min_score:g}" if f.min_score is not None else "",
            f"≤ {f.max_score:g}" if f.max_score is not None else "",
        )
        if b
    )


def _copying_score(f: CopyingScore) -> str:
    return f"{_head(f.head)}'s copying score Σλ/Σ|λ| of W_U W_OV W_E is {f.score:.3f} (needs {_score_bound(f.bound)})"


def _raised_most(f: RaisedMost) -> str:
    wrong = [f"{t} → {y}" for t, y in f.wrong]
    return f"the token each attended token raises most through {_head(f.head)}'s W_U W_OV W_E" + (
        f" (wrong: {', '.join(wrong[:4])}{' …' if len(wrong) > 4 else ''})" if wrong else ""
    )


def _matrix_differs(f: MatrixDiffers) -> str:
    return f"{words(f.what)} differs from the expected matrix"


def _at_most(f: AtMost) -> str:
    return f"≤ {f.most:g}"


def _values(names, values) -> str:
    return ", ".join(f"{n} {round(v, 3) + 0.0:g}".replace("-", "−") for n, v in zip(names, values))


def _patched_miss(f: PatchedMiss) -> str:
    return (
        f"of {f.n:,} residual vectors fed to the MLP of layer {f.layer}, the worst is {f.case}: it writes "
        f"{_values(f.names, f.yours)}, expected {_values(f.names, f.expected)}: off by {f.error:.3g} "
        f"(tolerance {f.tol:g})"
    )


def _width(f: Width) -> str:
    return (
        f"W_in of the MLP in layer {f.layer} has shape {f.shape}: d_mlp = {f.shape[0]:,} hidden units, "
        f"at most {f.most:,} allowed"
    )


def _value_rows(f: ValueRows) -> str:
    return (
        f"W_V of {_head(f.head)} has shape {f.shape}: a value of {f.shape[0]:,} dimensions, at most {f.most:,} allowed"
    )


FINDINGS.update(
    {
        ScoreBound: _score_bound,
        CopyingScore: _copying_score,
        RaisedMost: _raised_most,
        MatrixDiffers: _matrix_differs,
        AtMost: _at_most,
        PatchedMiss: _patched_miss,
        Width: _width,
        ValueRows: _value_rows,
    }
)


# --- code: what a compare found --------------------------------------------------------------------------------
def _show(a) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=3, suppress_small=True, separator=", ")


def _said(message: str) -> str:
    return f": {message}" if message else ""


def _your_code_raised(f: YourCodeRaised) -> str:
    return f"your code raised {f.error}{_said(f.message)}"


def _attention_case(f: ref.AttentionCase) -> str:
    return f"Q {f.Q}, K {f.K}, V {f.V}, mask {'None' if f.mask is None else f.mask}"


def _mask_case(f: ref.MaskCase) -> str:
    return f"T = {f.T}"


def _library_function(f: ref.LibraryFunction) -> str:
    if f.calls:
        return (
            f"{f.name} runs the library's own code ({f.module}.{f.function}); write {f.name} yourself, "
            "without calling circuits"
        )
    return (
        f"{f.name} is the library's own function ({f.module}.{f.function}); write {f.name} yourself in your puzzle file"
    )


def _raised(f: ref.Raised) -> str:
    where = f" at line {f.line} ({f.code})" if f.line is not None else ""
    return f"your {f.name} raised {f.error}{_said(f.message)}{where}, for {words(f.case)}"


def _not_a_pair(f: ref.NotAPair) -> str:
    return f"{f.name} must return a pair (A, C); it returned {f.returned} (for {words(f.case)})"


def _wrong_shape(f: ref.WrongShape) -> str:
    return f"{f.name} has shape {f.shape} but needs {f.needs} (for {words(f.case)})"


def _fully_masked(f: ref.FullyMasked) -> str:
    return "a row with every key masked must be all zeros"


def _overflows(f: ref.Overflows) -> str:
    return f"this row's scores reach ±{f.top:.4g}, where exp overflows (past 709): subtract the row's max before exp"


def _nan_at(f: ref.NanAt) -> str:
    return f"{f.name} has NaN at {list(f.index)} — {words(f.cause)} (for {words(f.case)})"


def _values_differ(f: ref.ValuesDiffer) -> str:
    return (
        f"{f.name} differs at {list(f.index)}: yours {f.yours:.6g}, expected {f.expected:.6g} (for {words(f.case)})\n"
        f"Q = {_show(f.Q)}\nK = {_show(f.K)}\nV = {_show(f.V)}\nyour {f.name} = {_show(f.your_output)}\n"
        f"expected {f.name} = {_show(f.expected_output)}"
    )


def _mask_shape(f: ref.MaskShape) -> str:
    return f"causal_mask({f.T}) has shape {f.shape} but needs ({f.T}, {f.T})"


def _mask_dtype(f: ref.MaskDtype) -> str:
    return f"causal_mask({f.T}) has dtype {f.dtype}; it must be bool (True = may attend)"


def _mask_entry(f: ref.MaskEntry) -> str:
    return (
        f"causal_mask({f.T})[{f.i}, {f.j}] is {f.yours} but position {f.i} "
        f"{'may' if f.may else 'may not'} attend to position {f.j}"
    )


FINDINGS.update(
    {
        YourCodeRaised: _your_code_raised,
        ref.AttentionCase: _attention_case,
        ref.MaskCase: _mask_case,
        ref.LibraryFunction: _library_function,
        ref.Raised: _raised,
        ref.NotAPair: _not_a_pair,
        ref.WrongShape: _wrong_shape,
        ref.FullyMasked: _fully_masked,
        ref.Overflows: _overflows,
        ref.NanAt: _nan_at,
        ref.ValuesDiffer: _values_differ,
        ref.MaskShape: _mask_shape,
        ref.MaskDtype: _mask_dtype,
        ref.MaskEntry: _mask_entry,
    }
)


# --- mechanisms: what an intervention found ----------------------------------------------------------------------
def _quoted(tokens) -> str:
    return repr("".join(tokens) if all(len(t) == 1 for t in tokens) else " ".join(tokens))


def _into(f) -> str:
    return ", ".join(f.into)


def _key(labels, k: int) -> str:
    return f"key {k} {labels[k]!r}"


def _keys(labels, keys) -> str:
    return _key(labels, keys[0]) if len(keys) == 1 else f"keys {', '.join(map(str, keys))}"


def _writer(writer: str) -> str:
    return "the embedding" if writer == "embed" else writer


def _depends(f, verb: str = "depend on") -> str:
    return f"on {_quoted(f.base)}, {_head(f.reader)}'s attention does not {verb} {_into(f)}"


def _unfollowed(f: Unfollowed) -> str:
    at = f"at query {f.query} {f.labels[f.query]!r}"
    patch = f"with {_writer(f.writer)}'s write into {_into(f)} taken from {_quoted(f.source)}"
    if f.top in f.points:  # on the right keys, but not enough
        return (
            f"{_depends(f, 'follow')} enough: {patch}, it puts only {f.mass:.2f} on {_keys(f.labels, f.points)} "
            f"{at}, where the patch points (needs ≥ {f.min_mass:g})"
        )
    where = f"{_key(f.labels, f.top)} ({f.top_weight:.2f}) {at}"
    verb = "depend on" if f.still else "follow"  # it stayed on its own target, or went elsewhere
    return (
        f"{_depends(f, verb)}: {patch}, it {'still ' if f.still else ''}attends to {where}, but the patch "
        f"points to {_keys(f.labels, f.points)} ({f.mass:.2f} there, needs ≥ {f.min_mass:g})"
    )


def _unbroken(f: Unbroken) -> str:
    return (
        f"{_depends(f)}: with {_writer(f.writer)}'s write into {_into(f)} zeroed, it still puts {f.mass:.2f} on its "
        f"target {_keys(f.labels, f.keys)} at query {f.query} {f.labels[f.query]!r} (zeroing must leave it "
        f"below {f.min_mass:g})"
    )


def _interventions(f: Interventions) -> str:
    lo, hi = f.lengths
    span = f"{lo}" if lo == hi else f"{lo}..{hi}"
    pair = f", e.g. {_quoted(f.example[0])} ← {_quoted(f.example[1])}" if f.example else ""
    return (
        f"{_head(f.reader)} ← {_writer(f.writer)} into {_into(f)}: {f.patched:,} patches (base ← source, lengths "
        f"{span}{pair}) and {f.zeroed:,} inputs with the write zeroed, {f.queries:,} queries"
    )


FINDINGS.update({Unfollowed: _unfollowed, Unbroken: _unbroken, Interventions: _interventions})
