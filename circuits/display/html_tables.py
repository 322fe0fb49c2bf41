"""A model's circuits as HTML: QK and OV tables per head, composition beside baselines, virtual heads, paths."""

from __future__ import annotations

import numpy as np

from circuits.display.html_page import esc, fmt, page
from circuits.display.html_patterns import patterns_body


# --- circuit tables ---------------------------------------------------------------------------------
def matrix_html(
    values,
    rows,
    cols,
    title: str,
    axes: tuple[str, str] = ("row", "column"),
    causal: bool = False,
    drop_zero: bool = True,
    max_dim: int = 40,
) -> str:
    """A labelled matrix (numbers, or exact strings) with hover; numbers shaded blue (+) / red (−), row peaks
    underlined."""
    exact = bool(values) and isinstance(values[0][0], str)
    A = None if exact else np.array([[np.nan if x is None else x for x in r] for r in values], dtype=float)
    n_r, n_c = len(values), len(values[0]) if values else 0
    nonzero = (lambda i, j: values[i][j] != "0") if exact else (lambda i, j: not A[i, j] == 0)
    keep_r = [i for i in range(n_r) if causal or not drop_zero or any(nonzero(i, j) for j in range(n_c))][:max_dim]
    keep_c = [j for j in range(n_c) if causal or not drop_zero or any(nonzero(i, j) for i in range(n_r))][:max_dim]
    top = float(np.nanmax(np.abs(A))) if A is not None and A.size and not np.all(np.isnan(A)) else 0.0
    head = "".join(f"<th>{esc(cols[j])}</th>" for j in keep_c)
    body = []
    for i in keep_r:
        cells = []
        seen = [A[i, j] for j in keep_c if not (causal and j > i)] if A is not None else []
        peak = max(seen) if seen and max(seen) != min(seen) else None
        for j in keep_c:
            if causal and j > i:
                cells.append('<td class="cv-x"></td>')
                continue
            tip = f"{axes[0]} {esc(rows[i])}, {axes[1]} {esc(cols[j])}: "
            if exact:
                cells.append(
                    f'<td data-v="{esc(values[i][j])}" title="{tip}{esc(values[i][j])}">{esc(values[i][j])}</td>'
                )
                continue
            x = A[i, j]
            a = abs(x) / top if top > 0 and not np.isnan(x) else 0.0
            rgb = "37,99,235" if x > 0 else "220,38,38"
            cls = ' class="cv-peak"' if peak is not None and x == peak else ""
            cells.append(
                f'<td{cls} data-v="{x:.6g}" title="{tip}{x:.6g}" style="background:rgba({rgb},{0.6 * a:.3f})">'
                f"{fmt(x)}</td>"
            )
        body.append(f"<tr><th>{esc(rows[i])}</th>{''.join(cells)}</tr>")
    hidden = (n_r - len(keep_r), n_c - len(keep_c))
    note = (
        f'<div class="cv-note">{hidden[0]} row(s), {hidden[1]} column(s) not shown (zero or beyond {max_dim})</div>'
        if any(hidden)
        else ""
    )
    table = (
        f'<table class="cv-mat"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        if keep_r and keep_c
        else '<div class="cv-note">(all zero)</div>'
    )
    return (
        f'<div class="cv-panel"><div class="cv-title">{esc(title)}</div>{table}{note}<div class="cv-info"></div></div>'
    )


def _head_html(head: dict) -> str:
    facts = [
        f"fixed pattern {head['fixed_pattern']}"
        if head["fixed_pattern"]
        else f"QK rank {head['qk']['rank']}, norm {fmt(head['qk']['norm'])}",
        f"OV rank {head['ov']['rank']}, norm {fmt(head['ov']['norm'])}"
        if head["writes"]
        else "no W_O: its result W_V·(attended x) is read directly",
    ]
    if head["copying_score"] is not None:
        facts.append(f"copying score {head['copying_score']:+.3f}")
    if head["position_offset"] is not None:
        facts.append(
            f"position table peaks at i{head['position_offset']:+d}"
            if head["position_offset"]
            else "position table peaks at i"
        )
    panels = []
    exact = head["exact"] or {}
    circuits = (
        ("W_QK", head["qk"], ("query", "key")),
        ("W_OV", head["ov"], ("write", "read")),
        ("W_V", {"matrix": head["W_V"]}, ("value", "read")),
    )
    for key, circuit, axes in circuits:
        if key == "W_OV" and not head["writes"]:
            continue
        if exact.get(key) is not None:
            t = exact[key]
            panels.append(matrix_html(t["values"], t["rows"], t["cols"], f"{key} (exact)", axes))
        elif circuit is not None and circuit["matrix"] is not None:
            t = circuit["matrix"]
            panels.append(matrix_html(t["values"], t["rows"], t["cols"], key, axes))
    for key, title, axes, causal in (
        ("token_table", "token QK table W_E^T W_QK W_E", ("query", "key"), False),
        ("position_table", "position QK table W_pos^T W_QK W_pos", ("query", "key"), True),
        ("full_ov", "full OV circuit W_U W_OV W_E", ("output", "attended"), False),
    ):
        if head[key] is not None:
            t = head[key]
            causal = causal and head.get("mask", "causal") == "causal"  # a bidirectional head sees later keys too
            panels.append(matrix_html(t["values"], t["rows"], t["cols"], title, axes, causal=causal))
    return (
        f'<h3>head {esc(head["name"])} <span class="cv-sub">{esc("; ".join(facts))}</span></h3>'
        f'<div class="cv-row">{"".join(panels)}</div>'
    )


def _composition_html(scores: list[dict]) -> str:
    from circuits.analysis.composition import VIRTUAL, VIRTUAL_MEANING  # analysis is imported by its verbs only

    if not scores:
        return '<p class="cv-note">no pairs of heads in different layers</p>'
    rows = [
        f"<tr><td>{esc(c['kind'])}</td><td>{esc(c['earlier'])} → {esc(c['later'])}</td>"
        f"<td>{c['score']:.3f}</td><td>{c['baseline']:.3f} ± {c['baseline_std']:.3f}</td>"
        f"<td>{c['z']:+.1f}</td><td>{c['verdict']}</td></tr>"
        for c in scores
    ]
    caption = f'<p class="cv-note">{esc(VIRTUAL_MEANING)}</p>' if any(c["kind"] == VIRTUAL for c in scores) else ""
    return (
        '<table class="cv-scores"><thead><tr><th>kind</th><th>earlier → later</th><th>score</th>'
        f"<th>random baseline ± sd</th><th>z</th><th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>" + caption
    )


def _paths_html(paths: dict, into: str) -> str:
    top = max(paths.values(), default=0.0) or 1.0
    rows = "".join(
        f'<tr><td>{esc(name)}</td><td>{fmt(size)}</td><td><span class="cv-bar" '
        f'style="width:{200 * size / top:.0f}px"></span></td></tr>'
        for name, size in sorted(paths.items(), key=lambda kv: -kv[1])
    )
    unit = "logit" if into == "logits" else "final-residual entry"
    head = f"<thead><tr><th>path</th><th>rms {unit}</th><th></th></tr></thead>"
    return f'<table class="cv-scores">{head}<tbody>{rows}</tbody></table>'


def analysis_html(model, trace=None, inputs=None, summary: dict | None = None, max_inputs: int = 8) -> str:
    """A whole page: every head's pattern, its circuit tables, composition beside baselines, virtual heads, paths."""
    from circuits.analysis.summary import analyze, example_inputs

    if trace is None:
        if inputs is None:
            inputs = summary["inputs"] if summary is not None else example_inputs(model)
        trace = model.run(inputs)
    s = summary if summary is not None else analyze(model, trace)
    return page(f"circuits: {s['model']}", analysis_body(model, trace, s, max_inputs))


def analysis_body(model, trace, s: dict, max_inputs: int = 8) -> str:
    """The analysis page's content, for a page or a notebook's output."""
    parts = [
        f"<h1>{esc(s['model'])}</h1>",
        f"<p>d_model = {s['d_model']}, {s['n_layers']} layer(s), heads per layer {s['n_heads']}; "
        f"residual directions: {esc(', '.join(s['residual']))}</p>",
        f"<h2>attention patterns</h2>{patterns_body(trace, max_inputs)}",
        "<h2>circuits</h2>",
        *(_head_html(h) for h in s["heads"]),
        "<h2>composition</h2>",
        _composition_html(s["composition"]),
    ]
    if s["virtual_heads"]:
        parts.append("<h2>virtual heads</h2>")
        panels = []
        for v in s["virtual_heads"]:
            t = v["exact"] or v["matrix"]
            if t is not None:
                title = f"W_OV^{v['later']} W_OV^{v['earlier']}" + (" (exact)" if v["exact"] else "")
                panels.append(matrix_html(t["values"], t["rows"], t["cols"], title, ("write", "read")))
        parts.append(f'<div class="cv-row">{"".join(panels)}</div>')
    if s["paths"] is not None:
        parts += ["<h2>paths</h2>", _paths_html(s["paths"], s["paths_into"])]
    return "".join(parts)
