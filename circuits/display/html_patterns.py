"""Attention patterns as HTML: one table per head and input, with hover values, within a budget of cells."""

from __future__ import annotations

import numpy as np

from circuits.display.html_page import esc, fragment, page


# --- attention patterns ---------------------------------------------------------------------------
def pattern_html(pattern: np.ndarray, tokens: list[str], title: str, sub: str = "", marks=None) -> str:
    """One head's pattern `[query, key]` as a table: query rows, key columns, hover gives value and tokens;
    `marks[q]` (a key, or keys) outlines the keys a target expects."""
    from circuits.display.render import expects

    T = len(tokens)
    show = T <= 16
    head = "".join(f"<th>{k} {esc(t)}</th>" for k, t in enumerate(tokens))
    rows = []
    for q in range(T):
        cells = []
        for k in range(T):
            p = float(pattern[q, k])
            if k > q and p == 0:
                cells.append('<td class="cv-x"></td>')
                continue
            tip = f"query {q} {esc(repr(tokens[q]))} → key {k} {esc(repr(tokens[k]))}: {p:.4f}"
            text = "" if not show or p < 0.005 else ("1" if p >= 0.995 else f"{p:.2f}"[1:])
            color = "#fff" if p > 0.55 else "#111"
            mark = ' class="cv-mark"' if marks is not None and q < len(marks) and expects(marks[q], k) else ""
            cells.append(
                f'<td{mark} data-v="{p:.6g}" title="{tip}" style="background:rgba(37,99,235,{p:.3f});color:{color}">'
                f"{text}</td>"
            )
        rows.append(f"<tr><th>{q} {esc(tokens[q])}</th>{''.join(cells)}</tr>")
    sub = f' <span class="cv-sub">{esc(sub)}</span>' if sub else ""
    return (
        f'<div class="cv-panel"><div class="cv-title">{esc(title)}{sub}</div>'
        f'<table class="cv-pat" data-head="{esc(title)}"><thead><tr><th></th>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table><div class="cv-info">hover a cell</div></div>'
    )


MAX_CELLS = 40_000  # attention cells in one rendering (~150 bytes each): a few MiB, never hundreds (GPT-2)
MAX_TOKENS = 64  # positions of each input shown


def chosen_heads(model, heads=None) -> list[tuple[int, int]]:
    """Every head (layer, index) of the model, or those asked for; a head the model lacks is a one-line error."""
    from circuits.errors import CircuitError

    every = [(l, h.index) for l in range(model.n_layers) for h in model.blocks[l].heads]
    if heads is None:
        return every
    asked = [tuple(int(x) for x in h) for h in heads]
    unknown = [h for h in asked if h not in every]
    if unknown:
        raise CircuitError(
            f"no head {', '.join(f'{l}.{h}' for l, h in unknown)} in {model.name}: it has layers 0 to "
            f"{model.n_layers - 1}, with heads {', '.join(str(model.n_heads(l)) for l in range(model.n_layers))}"
        )
    return asked


def patterns_body(
    trace, max_inputs: int = 8, heads=None, max_tokens: int = MAX_TOKENS, max_cells: int = MAX_CELLS
) -> str:
    """Each shown input's heads, layer by layer, within `max_cells` attention cells; what was left out is said,
    with how to choose heads."""
    model = trace.model
    wanted = chosen_heads(model, heads)
    n_inputs = min(trace.batch, max_inputs)
    longest = max((len(trace.tokens(n)) for n in range(n_inputs)), default=0)
    T = min(longest, max_tokens)
    shown = wanted[: max(1, max_cells // max(1, n_inputs * T * T))]
    parts = []
    for n in range(n_inputs):
        tokens = trace.tokens(n)[:T]
        t = len(tokens)
        parts.append(f"<h3>input {n}: {esc(model.vocab.join(tokens))}{' …' if len(trace.tokens(n)) > t else ''}</h3>")
        for l in sorted({l for l, _ in shown}):
            panels = []
            for h in (model.blocks[l].heads[i] for ll, i in shown if ll == l):
                sub = f"fixed {h.pattern}" if isinstance(h.pattern, str) else ("fixed" if h.pattern is not None else "")
                panels.append(pattern_html(trace.pattern(l, h.index)[n, :t, :t], tokens, f"head {l}.{h.index}", sub))
            parts.append(f'<div class="cv-title">layer {l}</div><div class="cv-row">{"".join(panels)}</div>')
    left_out = []
    if len(shown) < len(wanted):
        left_out.append(
            f"{len(shown)} of {len(wanted)} heads ({shown[0][0]}.{shown[0][1]} to {shown[-1][0]}.{shown[-1][1]})"
        )
    if T < longest:
        left_out.append(f"the first {T} of {longest} positions")
    if n_inputs < trace.batch:
        left_out.append(f"the first {n_inputs} of {trace.batch} inputs")
    if left_out:
        parts.append(
            f'<p class="cv-note">shown: {esc("; ".join(left_out))}. Choose with '
            f"circuits.patterns(trace, heads=[(layer, head), ...], max_tokens=..., max_inputs=...)</p>"
        )
    return "".join(parts)


def trace_html(trace, standalone: bool = True, max_inputs: int = 8, heads=None, max_tokens: int = MAX_TOKENS) -> str:
    """Every head's pattern per layer for each input (within MAX_CELLS cells); a whole page, or (standalone=False)
    a Jupyter fragment."""
    body = f"<h2>attention patterns</h2>{patterns_body(trace, max_inputs, heads, max_tokens)}"
    return page(f"circuits: {trace.model.name}", body) if standalone else fragment(body)


def failure_fragment(label: str, trace) -> str:
    """A failing target's shortest input through the model: every head's pattern, under the target's label."""
    return f'<p class="cv-note">failing input of: {esc(label)}</p>{patterns_body(trace, 1)}'
