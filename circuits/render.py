"""Terminal display with rich: attention heatmaps and labelled matrices, readable without colour too."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rich.console import Console
from rich.table import Table
from rich.text import Text


def console(file=None, width: int | None = None, color: bool | None = None) -> Console:
    """A console that drops colour codes when the output is not a terminal (CI logs, pipes)."""
    kwargs = {} if color is None else {"force_terminal": color, "no_color": not color}
    return Console(file=file, width=width or 120, highlight=False, soft_wrap=False, **kwargs)


def _shade(p: float) -> str:
    level = int(round(min(max(p, 0.0), 1.0) * 5))
    return ["", "on grey23", "on grey35", "on dark_blue", "on blue", "on bright_blue"][level]


def _cell(p: float, mark: bool = False) -> Text:
    if np.isnan(p):
        return Text("  · ", style="dim")
    s = " 1. " if p >= 0.995 else (" 0  " if p < 0.005 else f"{p:.2f}"[1:].rjust(4) if p < 1 else f"{p:4.2f}")
    if mark:
        s = s.rstrip() + "*" if s.endswith(" ") else s + "*"
    return Text(s, style=_shade(p) + (" bold" if mark else ""))


def pattern_heatmap(pattern: np.ndarray, query_labels: Sequence[str], key_labels: Sequence[str] | None = None,
                    title: str | None = None, targets: Sequence[int] | None = None, max_len: int = 40) -> Table:
    """An attention pattern `[query, key]` as a table: query rows, key columns, token labels on both axes.

    Weights print as .xx (1. for ≥ .995, 0 for < .005), so the table reads without colour;
    hidden (future) keys print as ·. `targets[q]` marks the key a target expects with *.
    Long inputs show their last `max_len` positions.
    """
    T = pattern.shape[0]
    key_labels = list(key_labels if key_labels is not None else query_labels)
    start = max(0, T - max_len)
    table = Table(title=title, show_edge=False, pad_edge=False, box=None, padding=(0, 0), title_justify="left")
    table.add_column("query ↓ key →", justify="right", no_wrap=True)
    for k in range(start, T):
        table.add_column(f"{k}\n{_label(key_labels[k])}", justify="right", no_wrap=True, min_width=4)
    for q in range(start, T):
        cells = []
        for k in range(start, T):
            p = pattern[q, k] if k <= q or pattern[q, k] > 0 else np.nan
            cells.append(_cell(float(p), targets is not None and targets[q] == k))
        table.add_row(f"{q} {_label(query_labels[q])} ", *cells)
    return table


def _label(tok: str) -> str:
    tok = tok.replace("\n", "\\n")
    return tok if len(tok) <= 5 else tok[:4] + "…"


def _num(x) -> str:
    if isinstance(x, (int, np.integer)):
        return str(x)
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)  # a symbolic entry prints as itself
    if f == 0:
        return "0"
    if f.is_integer() and abs(f) < 1e6:
        return str(int(f))
    return f"{f:.4g}"


def matrix_table(M, row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
                 title: str | None = None) -> Table:
    """A matrix (numbers or sympy) with named rows and columns; zeros print dim so the structure shows."""
    rows = M.tolist() if hasattr(M, "tolist") else [list(r) for r in M]
    if rows and not isinstance(rows[0], list):
        rows = [rows]
    n_cols = len(rows[0]) if rows else 0
    row_labels = list(row_labels) if row_labels is not None else [str(i) for i in range(len(rows))]
    col_labels = list(col_labels) if col_labels is not None else [str(j) for j in range(n_cols)]
    table = Table(title=title, box=None, padding=(0, 1), title_justify="left", show_edge=False)
    table.add_column("", justify="right", style="bold", no_wrap=True)
    for c in col_labels:
        table.add_column(str(c), justify="right", no_wrap=True)
    for label, row in zip(row_labels, rows):
        cells = [Text(_num(x), style="dim" if _num(x) == "0" else "") for x in row]
        table.add_row(str(label), *cells)
    return table


def to_text(renderable, width: int = 120) -> str:
    """Render to plain text (no colour codes), e.g. for a pytest report or a test."""
    import io

    c = Console(width=width, no_color=True, force_terminal=False, highlight=False, file=io.StringIO())
    c.print(renderable)
    return c.file.getvalue()
