"""Self-contained HTML (inline CSS and JS, no network): every head's pattern with hover values, and the circuit
tables; written only where it may be (never over a Python file, nor a page circuits did not write).

html_page      the page around every view: styles, script, escaping, a page or a notebook fragment
html_patterns  attention patterns, one table per head and input
html_tables    a model's circuits: QK and OV tables, composition, virtual heads, paths
"""

from __future__ import annotations

import os
from pathlib import Path

from circuits.display.html_page import (  # noqa: F401 - re-exported: html is where callers look
    CSS,
    CSS_RESULT,
    GENERATOR,
    JS,
    LEGACY,
    esc,
    fragment,
    report_page,
)
from circuits.display.html_patterns import (  # noqa: F401 - re-exported
    MAX_CELLS,
    MAX_TOKENS,
    chosen_heads,
    failure_fragment,
    pattern_html,
    trace_html,
)
from circuits.display.html_tables import analysis_body, analysis_html, matrix_html  # noqa: F401 - re-exported


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
