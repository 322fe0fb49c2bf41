"""Results as a notebook shows them: the report of a check, an audit or an analysis as HTML (offline, readable on
light and dark themes) and as plain text; and check, hint, show and analyze for an answer given as values."""

from __future__ import annotations

from circuits import explain
from circuits.display import words
from circuits.display.html import MAX_TOKENS, chosen_heads, esc, fragment, pattern_html, trace_html
from circuits.display.report import ICON, failure_line, puzzle_report, rows_to_show, worst_case
from circuits.display.terminal import to_text

TEXT_WIDTH = 100  # of the plain-text reports: a notebook's output area, not a terminal


# --- a check ----------------------------------------------------------------------------------------------
def result_html(result) -> str:
    """The report of `circuits check` as HTML: status, each target ✓/✗ with its line, coverage, margins, failures."""
    title = result.attempt.puzzle.title if result.attempt else ""
    parts = [
        f'<div class="cv-head"><b>{esc(result.name)}</b> · {esc(title)} · '
        f'<span class="cv-status cv-{esc(result.status.replace(" ", "-"))}">{esc(result.status)}</span></div>',
        '<ul class="cv-targets">',
    ]
    for t in result.targets:
        line = (
            f"{ICON[t.status]} {t.label}"
            + (f"  ({worst_case(t)}; {words.checked(t, result.coverage)})" if worst_case(t) else "")
            if t.status == "passed"
            else failure_line(t)
        )
        parts.append(f'<li class="cv-{esc(t.status.replace(" ", "-"))}">{esc(line)}</li>')
    parts.append("</ul>")
    if seen := words.coverage(result.coverage):
        parts.append(f'<div class="cv-note">checked on: {esc(seen)}</div>')
    parts += [f'<div class="cv-warn">not checked: {esc(s)}</div>' for s in words.skipped(result.coverage)]
    if result.margins is not None:
        parts.append(f"<div>margins: {esc(words.margins(result.margins))}</div>")
    hints = result.attempt.puzzle.hints if result.attempt else ()
    for n, t in enumerate(t for t in result.targets if t.status == "failed"):
        parts.append(_failure_html(t))
        if n == 0 and hints:
            number = result.attempt.puzzle.number
            more = f" (more: circuits.hint({number}, level=2))" if len(hints) > 1 else ""
            parts.append(f'<div class="cv-hint"><b>puzzle hint 1 of {len(hints)}:</b> {esc(hints[0] + more)}</div>')
    return fragment("".join(parts), "cv-result")


def _failure_html(t) -> str:
    """One failing target: how it was found, the shortest input, yours vs expected, the head's pattern, the hint."""
    f = t.failure
    head = f'<div class="cv-title cv-failed">✗ {esc(t.label)}</div>'
    if f is None or f.explanation is None:
        return (
            f'<div class="cv-panel cv-failure">{head}'
            f"<pre>{esc(explain.words(f.finding) if f else words.said(t))}</pre></div>"
        )
    e, trace = f.explanation, f.trace
    vocab = trace.model.vocab
    shrunk = f" and shrunk from {f.found_len} to {len(f.tokens)} tokens" if f.found_len != len(f.tokens) else ""
    parts = [
        head,
        f"<div>found by: {esc(f.stage)}{esc(shrunk)}</div>",
        f"<div>shortest failing input: <code>{esc(repr(vocab.join(f.tokens)))}</code> ({len(f.tokens)} "
        f"token{'' if len(f.tokens) == 1 else 's'})</div>",
        f"<div>{esc(explain.summary(e))}</div>",
        '<div class="cv-title">yours vs expected, per position:</div>',
        _explanation_table(e),
    ]
    if e.head is not None:
        l, h = e.head
        sub = "rows: queries, columns: keys" + (", outlined = target key" if e.marks else "")
        parts.append(
            pattern_html(trace.pattern(l, h)[0], trace.tokens(0), f"attention of head {l}.{h}", sub, marks=e.marks)
        )
    parts.append(f'<div class="cv-hint"><b>hint:</b> {esc(explain.hint(e))}</div>')
    return f'<div class="cv-panel cv-failure">{"".join(parts)}</div>'


def _explanation_table(e) -> str:
    columns, cells = explain.table(e)
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    rows = []
    for i in rows_to_show(len(cells), e.position):
        if i is None:
            rows.append(f'<tr><td colspan="{len(columns)}">…</td></tr>')
            continue
        cls = ' class="cv-worst"' if i == e.position else (' class="cv-bad"' if cells[i][-1] == "✗" else "")
        rows.append(f"<tr{cls}>" + "".join(f"<td>{esc(c)}</td>" for c in cells[i]) + "</tr>")
    return f'<table class="cv-expl"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def result_text(result, width: int = TEXT_WIDTH) -> str:
    return to_text(puzzle_report(result), width=width).rstrip()


def result_repr(result) -> str:
    """`print(result)`, `repr(result)`: the compact report (the first hint at most), at the terminal's width."""
    from circuits.display.terminal import terminal_width

    try:
        return result_text(result, terminal_width())
    except Exception:  # noqa: BLE001 - a repr must never raise: a half-built result still names itself
        return f"<PuzzleResult {getattr(result, 'file', '') or '?'}: {getattr(result, 'status', '?')}>"


# --- an audit, hints, an analysis ----------------------------------------------------------------------------
def audit_html(audit) -> str:
    lines = words.audit_lines(audit)
    body = f'<div class="cv-head"><b>{esc(lines[0])}</b></div><pre>{esc(chr(10).join(lines[1:]))}</pre>'
    return fragment(body, "cv-result")


def audit_text(audit) -> str:
    return "\n".join(words.audit_lines(audit))


class Hints:
    """Hints 1..level of a puzzle, as a notebook cell's value."""

    def __init__(self, hints, level: int, number: int):
        self.hints, self.level, self.number = list(hints), level, number

    def _more(self) -> str:
        return f"more: circuits.hint({self.number}, level={self.level + 1})" if self.level < len(self.hints) else ""

    def _repr_pretty_(self, p, cycle) -> None:
        lines = [f"hint {n + 1} of {len(self.hints)}: {self.hints[n]}" for n in range(self.level)]
        p.text("\n".join(lines + ([self._more()] if self._more() else [])))

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{esc(self.hints[n])}</li>" for n in range(self.level))
        more = f'<div class="cv-note">{esc(self._more())}</div>' if self._more() else ""
        return fragment(
            f'<div class="cv-title">hints 1 to {self.level} of {len(self.hints)}</div>'
            f'<ol class="cv-hint">{items}</ol>{more}',
            "cv-result",
        )


class Analysis:
    """`circuits analyze` of a model, as a notebook cell's value: the summary dict, its HTML and its text."""

    def __init__(self, model, inputs=None):
        from circuits.analysis.summary import analyze, example_inputs

        self.model = model
        self.trace = model.run(inputs or example_inputs(model))
        self.summary = analyze(model, self.trace)

    def _repr_html_(self) -> str:
        from circuits.display.html import analysis_body

        return fragment(analysis_body(self.model, self.trace, self.summary), "cv-result")

    def _repr_pretty_(self, p, cycle) -> None:
        from circuits.display.render import analysis_report

        p.text(to_text(analysis_report(self.summary), width=TEXT_WIDTH).rstrip())


class Patterns:
    """A trace's attention patterns as a notebook cell's value, within html.MAX_CELLS cells: chosen heads (all by
    default), the first `max_tokens` positions of the first `max_inputs` inputs; what is left out is said."""

    def __init__(self, trace, heads=None, max_tokens: int = MAX_TOKENS, max_inputs: int = 8):
        self.heads = chosen_heads(trace.model, heads)  # a head the model lacks: an error now, not when shown
        self.trace, self.max_tokens, self.max_inputs = trace, max_tokens, max_inputs

    def _repr_html_(self) -> str:
        return trace_html(
            self.trace, standalone=False, max_inputs=self.max_inputs, heads=self.heads, max_tokens=self.max_tokens
        )

    def _repr_pretty_(self, p, cycle) -> None:
        t = self.trace
        p.text(
            f"attention patterns of {t.model.name}: {t.batch} input(s), {len(self.heads)} head(s) chosen "
            "(a notebook shows them as HTML)"
        )


# --- the notebook API: an answer given as values ----------------------------------------------------------------
def check(puzzle, **values):
    """Check an answer given as values against the shipped puzzle: `circuits.check("consonants", W_Q=..., ...)`."""
    from circuits.checking.values import with_values
    from circuits.explain import check as run_check

    return run_check(with_values(puzzle, values, "circuits.check"))


def hint(puzzle, level: int = 1) -> Hints:
    """The first `level` hints of a shipped puzzle."""
    from circuits.checking.pipeline import load
    from circuits.checking.values import shipped
    from circuits.errors import CircuitError

    p = load(shipped(puzzle)).puzzle
    if not p.hints:
        raise CircuitError(f"{p.id} declares no hints")
    if not 1 <= level <= len(p.hints):
        raise CircuitError(f"circuits.hint({p.id!r}, level={level}): {p.id} has hints 1 to {len(p.hints)}")
    return Hints(p.hints, level, p.number)


def show(puzzle, text: str, **values):
    """The trace of an answer given as values on one input: every head's pattern (a Trace, shown as HTML)."""
    from circuits.checking.values import with_values

    model = with_values(puzzle, values, "circuits.show").model()
    tokens = model.vocab.split(text)
    model.vocab.encode(text)  # an unknown token is named against the text as typed
    return model.run([tokens])


def analyze(puzzle, **values) -> Analysis:
    """The analysis of an answer given as values (its circuits, composition and paths), on the worked example."""
    from circuits.checking.values import with_values

    attempt = with_values(puzzle, values, "circuits.analyze")
    return Analysis(attempt.model(), list(attempt.puzzle.examples[:1]) or None)


def patterns(trace, heads=None, max_tokens: int = MAX_TOKENS, max_inputs: int = 8) -> Patterns:
    """Choose what a trace's rendering shows: `circuits.patterns(trace, heads=[(9, 6), (9, 9)], max_tokens=128)`."""
    return Patterns(trace, heads, max_tokens, max_inputs)


def attach() -> None:
    """Give results their notebook reprs (here, because display sits above the classes' own layers)."""
    from circuits.audit.author import AuthorAudit
    from circuits.checking.checker import PuzzleResult
    from circuits.display import terminal
    from circuits.display.shown import trace_text
    from circuits.model.trace import Trace

    PuzzleResult._repr_html_ = result_html
    PuzzleResult._repr_pretty_ = lambda self, p, cycle: p.text(result_text(self))
    PuzzleResult.__repr__ = result_repr
    Trace.__repr__ = lambda self: trace_text(self, terminal.terminal_width())
    Trace._repr_pretty_ = lambda self, p, cycle: p.text(trace_text(self))
    AuthorAudit._repr_html_ = audit_html
    AuthorAudit._repr_pretty_ = lambda self, p, cycle: p.text(audit_text(self))
    Trace._repr_html_ = lambda self: Patterns(self)._repr_html_()
