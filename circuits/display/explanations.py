"""The words of a failing target's explanation made from the facts its kind found: the table, per position.

One function per kind of per-position facts (`kind` on the facts names it); the targets in
checking/targets/ hold the numbers, and nothing here computes a finding.
"""

from __future__ import annotations

import numpy as np

from circuits.checking.targets.formats import fmt_named, fmt_vec

COLUMNS = {
    "readout": ["pos", "token", "expected", "yours", "error", ""],
    "attention": ["query", "token", "target key", "argmax key (weight)", "on target", ""],
    "next-token": ["pos", "token", "expected next", "your top guess", "log-prob"],
}


def table(explanation) -> tuple[list[str], list[list[str]]]:
    """The explanation's table: its column headers and one row of cells per position."""
    facts = explanation.per_position
    return COLUMNS[facts.kind], ROWS[facts.kind](facts)


def _readout_rows(f) -> list[list[str]]:
    shown = (lambda v: fmt_named(v, f.names)) if f.names is not None else fmt_vec  # noqa: E731
    return [[str(i), repr(t), "—" if np.isnan(f.expected[i]).all() else shown(f.expected[i]), shown(f.yours[i]),
             f"{f.error[i]:.3g}" if f.error[i] >= 1e-9 else "0", "✗" if f.error[i] > f.tol else "✓"]
            for i, t in enumerate(f.tokens)]


def _attention_rows(f) -> list[list[str]]:
    rows = []
    for i, t in enumerate(f.tokens):
        top = f"{int(np.argmax(f.pattern[i]))} ({f.pattern[i].max():.3f})"
        if f.targets[i] < 0:
            rows.append([str(i), repr(t), "—", top, "—", ""])
            continue
        keys = np.flatnonzero(f.keys[i])
        wanted = ", ".join(str(int(k)) for k in keys) if len(keys) > 1 else f"{f.targets[i]} {f.tokens[f.targets[i]]!r}"
        rows.append([str(i), repr(t), wanted, top, f"{f.mass[i]:.3f}", "✗" if f.mass[i] < f.min_mass else "✓"])
    return rows


def _next_token_rows(f) -> list[list[str]]:
    return [[str(i), repr(t), "—" if e is None else repr(e), repr(top), "—" if np.isnan(lp) else f"{lp:.3f}"]
            for i, (t, e, top, lp) in enumerate(zip(f.tokens, f.expected, f.top, f.logprob))]


ROWS = {"readout": _readout_rows, "attention": _attention_rows, "next-token": _next_token_rows}
