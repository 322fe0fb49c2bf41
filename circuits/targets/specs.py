"""A spec's expectations as arrays `[b, T, k]`: what an output target compares the model's readout with."""

from __future__ import annotations

import numpy as np

from circuits.errors import CircuitError
from circuits.targets import once
from circuits.targets.base import Tokens


def spec_array(spec, batch: list[Tokens], T: int, k: int, what: str) -> np.ndarray:
    """The spec's expectations `[b, T, k]` (NaN where none); a BOS token shifts positions by one."""
    out = np.full((len(batch), T, k), np.nan)
    rows = once.each(
        (spec, "expected", k, what),
        batch,
        lambda toks: _spec_row(spec, toks, k, what),
        lambda inputs: _spec_rows(spec, inputs, k, what),
    )
    L = len(batch[0]) if batch else 0
    if all(len(t) == L for t in batch):  # the common case: one copy for the whole batch
        out[:, T - L :] = np.stack(rows) if rows else 0.0
        return out
    for n, (toks, row) in enumerate(zip(batch, rows)):
        out[n, T - len(toks) :] = row
    return out


def batched_array(batched, batch: list[Tokens], T: int, k: int, what: str) -> np.ndarray:
    """A batched spec's expectations `[b, T, k]` for inputs of one length (NaN where none, BOS shifting as above)."""
    b, L = len(batch), len(batch[0])
    exp = np.asarray(batched(np.array(batch, dtype=str).reshape(b, L)), dtype=float)
    if exp.shape != (b, L, k):
        raise CircuitError(
            f"the batched spec for {what} returned shape {exp.shape} for {b} inputs of {L} tokens; "
            f"it needs ({b}, {L}, {k})"
        )
    out = np.full((b, T, k), np.nan)
    out[:, T - L :] = exp
    return out


def _spec_rows(spec, batch: list[Tokens], k: int, what: str) -> list[np.ndarray]:
    """`_spec_row` of each input, converted in one step where every input has one length and a number everywhere."""
    specs = [spec(toks) for toks in batch]
    L = len(batch[0]) if batch else 0
    if all(len(e) == L == len(t) for e, t in zip(specs, batch)):
        try:
            return list(np.asarray(specs, dtype=float).reshape(len(batch), L, k))
        except (TypeError, ValueError):
            pass
    return [_spec_row(lambda _, e=e: e, toks, k, what) for toks, e in zip(batch, specs)]


def _spec_row(spec, toks: Tokens, k: int, what: str) -> np.ndarray:
    """One input's expectations `[len(toks), k]`, NaN where the spec says None."""
    exp = spec(toks)
    if len(exp) != len(toks):
        raise CircuitError(
            f"the spec for {what} returned {len(exp)} values for an input of {len(toks)} tokens {''.join(toks)!r}"
        )
    try:  # the common cases: an expectation at every position, or None (NaN) at some
        return np.asarray(exp, dtype=float).reshape(len(toks), k)
    except (TypeError, ValueError):
        try:
            return np.asarray([[np.nan] * k if e is None else e for e in exp], dtype=float).reshape(len(toks), k)
        except (TypeError, ValueError):
            pass
    out = np.full((len(toks), k), np.nan)
    for i, e in enumerate(exp):
        if e is not None:
            e = np.atleast_1d(np.asarray(e, dtype=float))
            if e.shape != (k,):
                raise CircuitError(
                    f"the spec for {what} gave {e.shape[0]} numbers at position {i} but the readout has {k}"
                )
            out[i] = e
    return out
