"""Terminal display with rich: attention heatmaps and labelled matrices, readable without colour too."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from circuits.display.terminal import console, terminal_width, to_text  # noqa: F401 - their older home


class Fit:
    """A table that fits the console: its label columns on the left of every block, the other columns in as many
    blocks as the width needs, each titled "columns 0 to 10 (1 of 3)", and a column wider than a block wrapped
    inside it.

    `labels` are (header, cells) pairs, `columns` the same for the data; cells are str or Text, one per row."""

    def __init__(
        self,
        labels: list,
        columns: list,
        title: str | None = None,
        padding: int = 1,
        header_style: str = "bold",
        label_style: str = "bold",
        gap: int = 1,
    ):
        self.labels, self.columns, self.title = labels, columns, title
        self.padding, self.header_style, self.label_style, self.gap = padding, header_style, label_style, gap

    @staticmethod
    def _width(header: str, cells) -> int:
        from rich.cells import cell_len

        return max([cell_len(line) for line in str(header).split("\n")] + [cell_len(str(c)) for c in cells] + [1])

    def blocks(self, width: int) -> list[list[int]]:
        """The data columns of each block, packed left to right into `width` cells."""
        fixed = sum(self._width(h, c) + self.padding for h, c in self.labels) + self.gap
        room = max(width - fixed, 8)
        out: list[list[int]] = [[]]
        used = 0
        for j, (h, cells) in enumerate(self.columns):
            w = self._width(h, cells) + self.padding
            if out[-1] and used + w > room:
                out.append([])
                used = 0
            out[-1].append(j)
            used += w
        return out

    def table(self, block: list[int], width: int) -> Table:
        pad = (0, self.padding, 0, 0)
        table = Table(box=None, padding=pad, show_edge=False, pad_edge=False, header_style=self.header_style)
        for n, (h, _) in enumerate(self.labels):
            last = n == len(self.labels) - 1
            table.add_column(
                str(h) + (" " * self.gap if last else ""), justify="right", no_wrap=True, style=self.label_style
            )
        for j in block:
            h, cells = self.columns[j]
            table.add_column(
                str(h), justify="right", no_wrap=len(block) > 1 or self._width(h, cells) < width // 2, overflow="fold"
            )
        for i in range(len(self.labels[0][1]) if self.labels else len(self.columns[0][1])):
            row = [c[i] if isinstance(c[i], Text) else Text(str(c[i])) for _, c in self.labels]
            if row:
                row[-1] = row[-1] + " " * self.gap
            table.add_row(*row, *[cells[i] for _, cells in (self.columns[j] for j in block)])
        return table

    def __rich_console__(self, _console, options):
        width = options.max_width
        blocks = self.blocks(width)
        if self.title:
            yield Text(self.title, style="italic")
        for n, block in enumerate(blocks):
            if len(blocks) > 1:
                first, last = self.columns[block[0]][0], self.columns[block[-1]][0]
                name = lambda h: str(h).split("\n")[0]  # noqa: E731
                yield Text(f"columns {name(first)} to {name(last)} ({n + 1} of {len(blocks)})", style="dim")
            yield self.table(block, width)


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


def pattern_heatmap(
    pattern: np.ndarray,
    query_labels: Sequence[str],
    key_labels: Sequence[str] | None = None,
    title: str | None = None,
    targets: Sequence[int] | None = None,
    max_len: int = 40,
) -> Fit:
    """An attention pattern `[query, key]` as a table: query rows, key columns, token labels on both axes.

    Weights print as .xx (1. for ≥ .995, 0 for < .005), so the table reads without colour;
    hidden (future) keys print as ·. `targets[q]` (a key, or a collection of keys) marks the keys a
    target expects with *.
    Long inputs show their last `max_len` positions.
    """
    T = pattern.shape[0]
    key_labels = list(key_labels if key_labels is not None else query_labels)
    start = max(0, T - max_len)
    rows = list(range(start, T))
    labels = [("query ↓ key →", [f"{q} {_label(query_labels[q])}" for q in rows])]
    columns = []
    for k in rows:
        cells = []
        for q in rows:
            p = pattern[q, k] if k <= q or pattern[q, k] > 0 else np.nan
            cells.append(_cell(float(p), targets is not None and expects(targets[q], k)))
        columns.append((f"{k}\n{_label(key_labels[k])}", cells))
    wide = any(len(_label(key_labels[k])) > 3 for k in rows)  # a 4-character key name would touch its neighbour
    return Fit(labels, columns, title=title, padding=1 if wide else 0, header_style="", label_style="")


def expects(target, k: int) -> bool:
    """Whether a query's target (a key, −1 or None for none, or a collection of keys) includes key k."""
    if target is None:
        return False
    if isinstance(target, (int, np.integer)):
        return int(target) == k
    return k in target


def short_label(tok: str) -> str:
    """A token as a table's row or column label: a newline escaped, at most five characters."""
    tok = tok.replace("\n", "\\n")
    return tok if len(tok) <= 5 else tok[:4] + "…"


_label = short_label


def number_text(x) -> str:
    """A matrix entry as a table prints it: whole numbers whole, others to 4 significant digits, symbols as
    themselves."""
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


_num = number_text


def matrix_table(
    M, row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None, title: str | None = None
) -> Table:
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


# --- circuit analysis: exact and numeric circuit tables, composition, paths, the whole report ---------
def _kept(M: np.ndarray, drop_zero: bool, max_dim: int) -> tuple[list[int], list[int], str]:
    """Rows and columns to show: non-zero ones (if `drop_zero`), at most `max_dim` of each, and a note of what was
    left out."""
    n_r, n_c = M.shape
    nonzero = np.nan_to_num(np.abs(M), nan=1.0) > 0
    rows = [i for i in range(n_r) if not drop_zero or nonzero[i].any()]
    cols = [j for j in range(n_c) if not drop_zero or nonzero[:, j].any()]
    notes = []
    if drop_zero and (len(rows) < n_r or len(cols) < n_c):
        notes.append(f"{n_r - len(rows)} zero row(s), {n_c - len(cols)} zero column(s) hidden")
    if len(rows) > max_dim or len(cols) > max_dim:
        notes.append(f"first {max_dim} of {len(rows)} rows × {len(cols)} columns shown")
    return rows[:max_dim], cols[:max_dim], "; ".join(notes)


def _titled(table: Table, title: str | None, caption: str | None = None):
    """A table under its title (and over its caption) that never wraps the title to the table's width."""
    parts = ([Text(title, style="italic")] if title else []) + [table]
    return Group(*parts, *([Text(caption, style="dim")] if caption else []))


def _heat(x: float, top: float) -> str:
    if top <= 0 or x == 0:
        return ""
    level = min(int(abs(x) / top * 3.999), 3)
    return (["", "on grey23", "on dark_blue", "on blue"] if x > 0 else ["", "on grey23", "on dark_red", "on red"])[
        level
    ]


def circuit_table(
    M,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    title: str | None = None,
    causal: bool = False,
    drop_zero: bool = True,
    max_dim: int = 24,
):
    """A numeric circuit (QK table, OV circuit, …) with named rows and columns; each row's largest entry
    is marked * so the table reads without colour. `causal` prints keys after the query as ·."""
    A = np.array(
        [[np.nan if x is None else x for x in row] for row in np.asarray(M, dtype=object).tolist()], dtype=float
    )
    if A.ndim != 2:
        A = A.reshape(1, -1)
    row_labels = list(row_labels) if row_labels is not None else [str(i) for i in range(A.shape[0])]
    col_labels = list(col_labels) if col_labels is not None else [str(j) for j in range(A.shape[1])]
    rows, cols, note = _kept(A, drop_zero and not causal, max_dim)
    visible = np.tril(np.ones(A.shape, dtype=bool)) if causal else np.ones(A.shape, dtype=bool)
    top = float(np.nanmax(np.abs(A))) if A.size and not np.all(np.isnan(A)) else 0.0
    caption = note or None
    peaks = {}
    for i in rows:
        finite = [A[i, j] for j in cols if visible[i, j] and not np.isnan(A[i, j])]
        peaks[i] = max(finite) if finite and max(finite) != min(finite) else None
    columns = []
    for j in cols:
        cells = []
        for i in rows:
            x, peak = A[i, j], peaks[i]
            if not visible[i, j]:
                cells.append(Text("·", style="dim"))
                continue
            s = _num(x) + ("*" if peak is not None and x == peak else "")
            cells.append(Text(s, style=("dim" if s == "0" else _heat(x, top)) + (" bold" if s.endswith("*") else "")))
        head = str(col_labels[j])
        columns.append((_label(head) if len(head) > 8 else head, cells))
    if not rows or not cols or not np.any(np.nan_to_num(A, nan=1.0)[visible]):
        table = Table(box=None, show_header=False)
        table.add_row(Text("(all zero)", style="dim"))
        return _titled(table, title, caption)
    return _titled(Fit([("", [str(row_labels[i]) for i in rows])], columns), title, caption)


def exact_table(
    M,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    title: str | None = None,
    drop_zero: bool = True,
):
    """A sympy Matrix (or nested lists of exact strings) printed exactly: 1/2, sqrt(2)/2, beta; zeros dim."""
    rows = [[str(x) for x in row] for row in (M.tolist() if hasattr(M, "tolist") else M)]
    n_r, n_c = len(rows), len(rows[0]) if rows else 0
    row_labels = list(row_labels) if row_labels is not None else [str(i) for i in range(n_r)]
    col_labels = list(col_labels) if col_labels is not None else [str(j) for j in range(n_c)]
    keep_r = [i for i in range(n_r) if not drop_zero or any(x != "0" for x in rows[i])]
    keep_c = [j for j in range(n_c) if not drop_zero or any(rows[i][j] != "0" for i in range(n_r))]
    hidden = (n_r - len(keep_r), n_c - len(keep_c))
    caption = f"{hidden[0]} zero row(s), {hidden[1]} zero column(s) hidden" if any(hidden) else None
    if not keep_r or not keep_c:
        table = Table(box=None, show_header=False)
        table.add_row(Text("(all zero)", style="dim"))
        return _titled(table, title, caption)
    columns = [
        (str(col_labels[j]), [Text(rows[i][j], style="dim" if rows[i][j] == "0" else "") for i in keep_r])
        for j in keep_c
    ]
    return _titled(Fit([("", [str(row_labels[i]) for i in keep_r])], columns), title, caption)


COMPOSITION_TITLE = "composition (score beside a random baseline of the same shape and rank)"


def composition_table(scores: Sequence, title: str | None = COMPOSITION_TITLE):
    """Q/K/V-composition scores with their random baseline, z and a verdict in words (above / near / below)."""
    from circuits.analysis.composition import VIRTUAL, VIRTUAL_MEANING  # analysis is imported by its verbs only

    table = Table(box=None, padding=(0, 1), show_edge=False)
    for name, justify in (
        ("kind", "left"),
        ("earlier → later", "left"),
        ("score", "right"),
        ("baseline ± sd", "right"),
        ("z", "right"),
        ("", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)
    for c in scores:
        c = c if isinstance(c, dict) else c.to_dict()
        style = {"above": "bold green", "below": "dim"}.get(c["verdict"], "")
        table.add_row(
            f"{c['kind']}",
            f"{c['earlier']} → {c['later']}",
            f"{c['score']:.3f}",
            f"{c['baseline']:.3f} ± {c['baseline_std']:.3f}",
            f"{c['z']:+.1f}",
            Text(c["verdict"], style=style),
        )
    if not scores:
        table = Table(box=None, show_header=False)
        table.add_row(Text("(no pairs of heads in different layers)", style="dim"))
    virtual = any((c if isinstance(c, dict) else c.to_dict())["kind"] == VIRTUAL for c in scores)
    return _titled(table, title, VIRTUAL_MEANING if virtual else None)


def paths_table(sizes: dict, title: str | None = "paths: root-mean-square logit each path contributes"):
    """Each path's size, largest first, with a bar so the table reads without colour."""
    table = Table(box=None, padding=(0, 1), show_edge=False)
    table.add_column("path", no_wrap=True)
    table.add_column("rms", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    top = max(sizes.values(), default=0.0) or 1.0
    for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
        table.add_row(name, _num(size), "█" * int(round(size / top * 30)))
    return _titled(table, title)


def analysis_report(summary: dict):
    """The whole analysis (the dict of `circuits.analysis.summary.analyze`) as one renderable."""
    parts: list = [
        Text(f"{summary['model']}: d_model = {summary['d_model']}, heads per layer {summary['n_heads']}", style="bold")
    ]
    for n, tokens in enumerate(summary["inputs"]):
        parts.append(Text(f"input {n}: {' '.join(tokens)}"))
    for head in summary["heads"]:
        parts += ["", *_head_report(head, summary)]
    parts += ["", composition_table(summary["composition"])]
    for v in summary["virtual_heads"]:
        title = f"virtual head {v['earlier']} → {v['later']}: W_OV^{v['later']} W_OV^{v['earlier']} (rank {v['rank']})"
        if v["exact"] is not None:
            parts += [
                "",
                exact_table(v["exact"]["values"], v["exact"]["rows"], v["exact"]["cols"], title=title + ", exact"),
            ]
        elif v["matrix"] is not None:
            parts += ["", circuit_table(v["matrix"]["values"], v["matrix"]["rows"], v["matrix"]["cols"], title=title)]
    if summary["paths"] is not None:
        what = "logit" if summary["paths_into"] == "logits" else "final-residual entry"
        parts += ["", paths_table(summary["paths"], title=f"paths: root-mean-square {what} each path contributes")]
    return Group(*parts)


def _head_report(head: dict, summary: dict) -> list:
    name = head["name"]
    facts = [
        f"fixed pattern {head['fixed_pattern']!r}"
        if head["fixed_pattern"]
        else f"QK rank {head['qk']['rank']}, ‖W_QK‖ = {_num(head['qk']['norm'])}"
    ]
    facts.append(
        f"OV rank {head['ov']['rank']}, ‖W_OV‖ = {_num(head['ov']['norm'])}"
        if head["writes"]
        else "no W_O: its result W_V·(attended x) is read directly"
    )
    if head["copying_score"] is not None:
        facts.append(f"copying score {head['copying_score']:+.3f}")
    if head["position_offset"] is not None:
        facts.append(
            f"position table peaks at i{head['position_offset']:+d}"
            if head["position_offset"]
            else "position table peaks at i"
        )
    out: list = [Text(f"head {name}: " + "; ".join(facts), style="bold")]
    if head["patterns"]:
        tokens = summary["inputs"][0]
        out.append(
            pattern_heatmap(
                np.array(head["patterns"][0], dtype=float), tokens, title=f"head {name} attention on input 0"
            )
        )
    exact = head["exact"] or {}
    for key, what in (
        ("W_QK", "W_QK = W_Q^T W_K (rows: query directions, columns: key directions)"),
        ("W_OV", "W_OV = W_O W_V (rows: written directions, columns: read directions)"),
        ("W_V", "W_V (rows: value dimensions, columns: read directions)"),
    ):
        if key == "W_OV" and not head["writes"]:
            continue
        part = exact.get(key)
        dense = {"W_QK": head["qk"], "W_OV": head["ov"], "W_V": {"matrix": head["W_V"]}}[key] or {}
        if part is not None:
            out.append(exact_table(part["values"], part["rows"], part["cols"], title=f"{what}, exact"))
        elif dense.get("matrix") is not None:
            m = dense["matrix"]
            out.append(circuit_table(m["values"], m["rows"], m["cols"], title=what))
    for key, what, causal in (
        ("token_table", "token × token QK table W_E^T W_QK W_E (query rows, key columns)", False),
        ("position_table", "position × position QK table W_pos^T W_QK W_pos (query rows, key columns)", True),
        ("full_ov", "full OV circuit W_U W_OV W_E (rows: output token, columns: attended token)", False),
    ):
        if head[key] is not None:
            t = head[key]
            causal = causal and head.get("mask", "causal") == "causal"  # a bidirectional head sees later keys too
            out.append(circuit_table(t["values"], t["rows"], t["cols"], title=what, causal=causal))
    return out
