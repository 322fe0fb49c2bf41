"""Code's words: what a code puzzle's compare found (your code raised; the library's compare of `attention` and
`causal_mask`: a wrong shape, a NaN and its cause, a value that differs, a mask entry), each said in one function.

The facts are made where the compare runs (targets/code.py, checking/reference.py); here they are said,
and a NaN's likely cause (a fully masked row, or exp overflowing), which the verdict does not need, is told.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.checking import reference as ref
from circuits.explain.tables import words
from circuits.targets.code import YourCodeRaised


def _show(a) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=3, suppress_small=True, separator=", ")


def _said(message: str) -> str:
    return f": {message}" if message else ""


@dataclass(frozen=True)
class FullyMasked:
    """Why a row is NaN: every key of that row is masked (the row must come out all zeros)."""


@dataclass(frozen=True)
class Overflows:
    """Why a row is NaN: its scores reach ±`top`, past where exp overflows (709) unless the row's max is subtracted."""

    top: float


def cause(f: ref.NanAt) -> FullyMasked | Overflows:
    """What the NaN in row (b, q) most likely comes from: a fully masked row, or exp overflowing on large scores."""
    b, q = f.index[:2]
    if f.mask is not None and not f.mask[b, q].any():
        return FullyMasked()
    return Overflows(float(np.abs(f.K[b] @ f.Q[b, q]).max()) / np.sqrt(f.Q.shape[-1]))


@words.register
def _(f: YourCodeRaised) -> str:
    return f"your code raised {f.error}{_said(f.message)}"


@words.register
def _(f: ref.AttentionCase) -> str:
    return f"Q {f.Q}, K {f.K}, V {f.V}, mask {'None' if f.mask is None else f.mask}"


@words.register
def _(f: ref.MaskCase) -> str:
    return f"T = {f.T}"


@words.register
def _(f: ref.LibraryFunction) -> str:
    if f.calls:
        return (
            f"{f.name} runs the library's own code ({f.module}.{f.function}); write {f.name} yourself, "
            "without calling circuits"
        )
    return (
        f"{f.name} is the library's own function ({f.module}.{f.function}); write {f.name} yourself in your puzzle file"
    )


@words.register
def _(f: ref.Raised) -> str:
    where = f" at line {f.line} ({f.code})" if f.line is not None else ""
    return f"your {f.name} raised {f.error}{_said(f.message)}{where}, for {words(f.case)}"


@words.register
def _(f: ref.NotAPair) -> str:
    return f"{f.name} must return a pair (A, C); it returned {f.returned} (for {words(f.case)})"


@words.register
def _(f: ref.WrongShape) -> str:
    return f"{f.name} has shape {f.shape} but needs {f.needs} (for {words(f.case)})"


@words.register
def _(f: FullyMasked) -> str:
    return "a row with every key masked must be all zeros"


@words.register
def _(f: Overflows) -> str:
    return f"this row's scores reach ±{f.top:.4g}, where exp overflows (past 709): subtract the row's max before exp"


@words.register
def _(f: ref.NanAt) -> str:
    return f"{f.name} has NaN at {list(f.index)} — {words(cause(f))} (for {words(f.case)})"


@words.register
def _(f: ref.ValuesDiffer) -> str:
    return (
        f"{f.name} differs at {list(f.index)}: yours {f.yours:.6g}, expected {f.expected:.6g} (for {words(f.case)})\n"
        f"Q = {_show(f.Q)}\nK = {_show(f.K)}\nV = {_show(f.V)}\nyour {f.name} = {_show(f.your_output)}\n"
        f"expected {f.name} = {_show(f.expected_output)}"
    )


@words.register
def _(f: ref.MaskShape) -> str:
    return f"causal_mask({f.T}) has shape {f.shape} but needs ({f.T}, {f.T})"


@words.register
def _(f: ref.MaskDtype) -> str:
    return f"causal_mask({f.T}) has dtype {f.dtype}; it must be bool (True = may attend)"


@words.register
def _(f: ref.MaskEntry) -> str:
    return (
        f"causal_mask({f.T})[{f.i}, {f.j}] is {f.yours} but position {f.i} "
        f"{'may' if f.may else 'may not'} attend to position {f.j}"
    )
