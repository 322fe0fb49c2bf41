"""The page around every HTML view: inline CSS and JS (no network), escaping, a whole page or a notebook fragment."""

from __future__ import annotations

import html as _html

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


def fmt(x: float) -> str:
    if x == 0:
        return "0"
    if float(x).is_integer() and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.4g}"


def fragment(body: str, cls: str = "") -> str:
    """A piece of a notebook's output: its own styles (and the result styles for a report), no page around it."""
    css = CSS + (CSS_RESULT if cls else "")
    return (
        f'<div class="{"cv-root " + cls if cls else "cv-root"}"><style>{css}</style>{body}<script>{JS}</script></div>'
    )


def report_page(title: str, sections: list[tuple[str, str, str, str]]) -> str:
    """A self-contained page of reports: per section (heading, status, plain-text report, HTML fragment)."""
    colour = {"solved": "#15803d", "failing": "#b91c1c", "error": "#b91c1c"}
    body = [f"<h1>{esc(title)}</h1>"]
    for heading, status, text, fragment in sections:
        body.append(
            f'<h2>{esc(heading)} · <span style="color:{colour.get(status, "#a16207")}">{esc(status)}</span></h2>'
            f'<pre style="white-space:pre-wrap">{esc(text)}</pre>{fragment}'
        )
    return page(title, "".join(body))


def page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{GENERATOR}<title>{esc(title)}</title>'
        f'<style>{CSS}</style></head>\n<body><div class="cv-root">{body}</div><script>{JS}</script></body></html>\n'
    )
