"""Self-contained HTML (inline CSS and JS, no network): every head's pattern with hover values, and the circuit
tables."""

from __future__ import annotations

import html as _html
import os
from pathlib import Path

import numpy as np

from circuits.analysis.composition import VIRTUAL_MEANING

# The root sets its own background and text colour: readable on a notebook's white page and on a dark theme alike.
CSS = """
.cv-root { font: 13px/1.4 system-ui, sans-serif; color: #111; background: #fff; padding: 8px; border-radius: 4px; }
.cv-root h1 { font-size: 18px; margin: 8px 0; }
.cv-root h2 { font-size: 15px; margin: 18px 0 6px; border-bottom: 1px solid #ccc; }
.cv-root h3 { font-size: 13px; margin: 10px 0 4px; }
.cv-row { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
.cv-panel { border: 1px solid #ddd; border-radius: 4px; padding: 6px; background: #fff; }
.cv-title { font-weight: 600; margin-bottom: 4px; }
.cv-sub { color: #555; font-weight: 400; }
.cv-info { color: #333; min-height: 1.4em; font-family: ui-monospace, monospace; font-size: 12px; }
.cv-root table { border-collapse: collapse; }
.cv-pat td { width: 18px; height: 18px; padding: 0; text-align: center; font-size: 9px; border: 1px solid #f2f2f2; }
.cv-pat th { font-weight: 400; font-size: 11px; padding: 0 3px; font-family: ui-monospace, monospace; }
.cv-pat thead th { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; }
.cv-root td[data-v]:hover { outline: 2px solid #f59e0b; }
.cv-x { background: #f4f4f4; }
.cv-mat td {
  padding: 1px 5px; text-align: right; font-family: ui-monospace, monospace; font-size: 12px; border: 1px solid #eee;
}
.cv-mat th { padding: 1px 5px; font-size: 11px; font-family: ui-monospace, monospace; font-weight: 600; }
.cv-peak { font-weight: 700; text-decoration: underline; }
.cv-note { color: #666; font-size: 11px; }
.cv-bar { display: inline-block; height: 10px; background: #2563eb; }
.cv-scores td, .cv-scores th { padding: 2px 8px; text-align: left; border-bottom: 1px solid #eee; }
.cv-pat td.cv-mark { outline: 2px solid #d97706; outline-offset: -2px; font-weight: 700; }
div.cv-root table, div.cv-root tr, div.cv-root th, div.cv-root td { color: #111; line-height: normal; max-width: none; }
div.cv-root tbody tr, div.cv-root tbody tr:nth-child(odd), div.cv-root tbody tr:hover { background: transparent; }
div.cv-root .cv-pat td { padding: 0; text-align: center; }
"""  # the div.cv-root rules outrank a notebook theme's own table styles (striped rows, light text on dark)

CSS_RESULT = """
.cv-result .cv-head { font-size: 14px; margin-bottom: 4px; }
.cv-status { padding: 0 6px; border-radius: 3px; color: #fff; }
.cv-solved { background: #15803d; }
.cv-failing, .cv-error { background: #b91c1c; }
.cv-not-attempted { background: #a16207; }
.cv-targets { list-style: none; padding-left: 0; margin: 4px 0; font-family: ui-monospace, monospace; font-size: 12px; }
.cv-targets li.cv-passed { color: #15803d; } .cv-targets li.cv-failed, .cv-targets li.cv-error { color: #b91c1c; }
.cv-targets li.cv-not-attempted { color: #a16207; }
.cv-title.cv-failed { color: #b91c1c; }
.cv-warn { color: #a16207; }
.cv-failure { margin: 8px 0; }
.cv-failure code { background: #f3f4f6; color: #111; padding: 0 3px; }
.cv-expl td, .cv-expl th { padding: 1px 6px; font-family: ui-monospace, monospace; font-size: 12px; text-align: left; }
.cv-expl tr.cv-bad td { color: #b91c1c; }
.cv-expl tr.cv-worst td { color: #b91c1c; font-weight: 700; background: #fef2f2; }
.cv-hint { color: #713f12; background: #fefce8; padding: 4px 6px; margin-top: 6px; white-space: pre-wrap; }
.cv-root pre { color: #111; background: #fff; white-space: pre-wrap; }
"""

GENERATOR = '<meta name="generator" content="circuits">'  # marks a page as ours: only such pages are overwritten
LEGACY = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>circuits: '  # pages from before the mark

JS = """
(function () {
  if (window.circuitsHover) { return; }
  window.circuitsHover = true;
  document.addEventListener("mouseover", function (e) {
    var cell = e.target.closest ? e.target.closest("td[data-v]") : null;
    if (!cell) { return; }
    var panel = cell.closest(".cv-panel");
    var info = panel ? panel.querySelector(".cv-info") : null;
    if (info) { info.textContent = cell.getAttribute("title"); }
  });
})();
"""


def esc(s) -> str:
    """HTML-escaped text; slashes too, so no token or name can put a web address into the file."""
    return _html.escape(str(s), quote=True).replace("/", "&#47;")


def _fmt(x: float) -> str:
    if x == 0:
        return "0"
    if float(x).is_integer() and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.4g}"


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


def _patterns_body(
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
    body = f"<h2>attention patterns</h2>{_patterns_body(trace, max_inputs, heads, max_tokens)}"
    return _page(f"circuits: {trace.model.name}", body) if standalone else fragment(body)


def fragment(body: str, cls: str = "") -> str:
    """A piece of a notebook's output: its own styles (and the result styles for a report), no page around it."""
    css = CSS + (CSS_RESULT if cls else "")
    return (
        f'<div class="{"cv-root " + cls if cls else "cv-root"}"><style>{css}</style>{body}<script>{JS}</script></div>'
    )


def failure_fragment(label: str, trace) -> str:
    """A failing target's shortest input through the model: every head's pattern, under the target's label."""
    return f'<p class="cv-note">failing input of: {esc(label)}</p>{_patterns_body(trace, 1)}'


def report_page(title: str, sections: list[tuple[str, str, str, str]]) -> str:
    """A self-contained page of reports: per section (heading, status, plain-text report, HTML fragment)."""
    colour = {"solved": "#15803d", "failing": "#b91c1c", "error": "#b91c1c"}
    body = [f"<h1>{esc(title)}</h1>"]
    for heading, status, text, fragment in sections:
        body.append(
            f'<h2>{esc(heading)} · <span style="color:{colour.get(status, "#a16207")}">{esc(status)}</span></h2>'
            f'<pre style="white-space:pre-wrap">{esc(text)}</pre>{fragment}'
        )
    return _page(title, "".join(body))


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{GENERATOR}<title>{esc(title)}</title>'
        f'<style>{CSS}</style></head>\n<body><div class="cv-root">{body}</div><script>{JS}</script></body></html>\n'
    )


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
                f"{_fmt(x)}</td>"
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
        else f"QK rank {head['qk']['rank']}, norm {_fmt(head['qk']['norm'])}",
        f"OV rank {head['ov']['rank']}, norm {_fmt(head['ov']['norm'])}"
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
    if not scores:
        return '<p class="cv-note">no pairs of heads in different layers</p>'
    rows = [
        f"<tr><td>{esc(c['kind'])}</td><td>{esc(c['earlier'])} → {esc(c['later'])}</td>"
        f"<td>{c['score']:.3f}</td><td>{c['baseline']:.3f} ± {c['baseline_std']:.3f}</td>"
        f"<td>{c['z']:+.1f}</td><td>{c['verdict']}</td></tr>"
        for c in scores
    ]
    caption = f'<p class="cv-note">{esc(VIRTUAL_MEANING)}</p>' if any(c["kind"] == "virtual" for c in scores) else ""
    return (
        '<table class="cv-scores"><thead><tr><th>kind</th><th>earlier → later</th><th>score</th>'
        f"<th>random baseline ± sd</th><th>z</th><th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>" + caption
    )


def _paths_html(paths: dict, into: str) -> str:
    top = max(paths.values(), default=0.0) or 1.0
    rows = "".join(
        f'<tr><td>{esc(name)}</td><td>{_fmt(size)}</td><td><span class="cv-bar" '
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
    return _page(f"circuits: {s['model']}", analysis_body(model, trace, s, max_inputs))


def analysis_body(model, trace, s: dict, max_inputs: int = 8) -> str:
    """The analysis page's content, for a page or a notebook's output."""
    parts = [
        f"<h1>{esc(s['model'])}</h1>",
        f"<p>d_model = {s['d_model']}, {s['n_layers']} layer(s), heads per layer {s['n_heads']}; "
        f"residual directions: {esc(', '.join(s['residual']))}</p>",
        f"<h2>attention patterns</h2>{_patterns_body(trace, max_inputs)}",
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


def written_by_circuits(path) -> bool:
    """Whether the file at `path` is a page circuits wrote (it carries GENERATOR near the top)."""
    try:
        if not os.path.isfile(path):  # a terminal or a pipe: reading would wait for input, and it is no page
            return False
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return GENERATOR in head or head.startswith(LEGACY)


def html_target(path, force: bool = False) -> Path:
    """Where an HTML page may be written, or a CircuitError in one line saying why not there.

    Never a Python file (a learner's puzzle or solution); an existing file only when circuits
    wrote it, unless `force`; the folder must exist and be writable.
    """
    from circuits.errors import CircuitError

    shown = str(path)
    try:
        real = Path(os.path.realpath(path))  # a link is judged (and written) by what it points to
        exists, is_dir = real.exists(), real.is_dir()
        folder_ok = real.parent.is_dir()
    except OSError as e:
        raise CircuitError(f"cannot write the HTML page {shown}: {e.strerror or e}") from None
    if real.suffix.lower() in (".py", ".pyw", ".ipynb") or Path(shown).suffix.lower() in (".py", ".pyw", ".ipynb"):
        raise CircuitError(
            f"{shown} is a Python file (a puzzle or solution?); HTML is never written over one: "
            "give a name ending in .html"
        )
    if is_dir:
        raise CircuitError(
            f"{shown} is a folder; give a file name for the HTML page, e.g. {Path(shown) / 'circuits.display.html'}"
        )
    if not folder_ok:
        raise CircuitError(f"cannot write the HTML page {shown}: {Path(shown).parent} is not an existing folder")
    if os.path.lexists(real) and not exists:
        raise CircuitError(f"{shown} is a link that leads nowhere (broken, or a loop); refusing to write through it")
    if exists and not force and not written_by_circuits(real):
        raise CircuitError(
            f"{shown} exists and circuits did not write it; refusing to overwrite it with HTML "
            "(choose another name, or add --force)"
        )
    if not os.access(real if exists else real.parent, os.W_OK):
        raise CircuitError(f"cannot write the HTML page {shown}: permission denied")
    return real


def write_html(path, trace=None, model=None, summary: dict | None = None, force: bool = False) -> Path:
    """Write the analysis page (when `model` is given) or the trace's patterns page to `path`; returns the path.

    `path` is checked first (`html_target`): no Python file, and no existing file circuits did not write unless `force`.
    """
    from circuits.errors import CircuitError

    if model is None and trace is None:
        raise CircuitError("write_html needs a model or a trace to show")
    real = html_target(path, force)
    text = analysis_html(model, trace, summary=summary) if model is not None else trace_html(trace, standalone=True)
    mode = "w" if real.exists() else "x"  # "x": a file that appeared since the check is not overwritten
    try:
        with open(real, mode, encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise CircuitError(f"{path} appeared while the HTML page was being made; refusing to overwrite it") from None
    except OSError as e:
        raise CircuitError(f"cannot write the HTML page {path}: {e.strerror or e}") from None
    return Path(path)
