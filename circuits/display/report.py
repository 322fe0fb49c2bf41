"""Reports a learner reads: one target's failure (shrunk input, heatmap, yours vs expected, hint) and the summary
table."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from circuits import explain
from circuits.checking.checker import PuzzleResult, TargetResult
from circuits.checking.puzzle import stars
from circuits.display.render import matrix_table, pattern_heatmap
from circuits.display.terminal import to_text
from circuits.display.words import checked, coverage, margins, printable, said, skipped, small_short, tried
from circuits.io import paths
from circuits.targets import Kind, higher_is_worse

ICON = {"passed": "✓", "failed": "✗", "error": "!", "not attempted": "·"}
STYLE = {
    "passed": "green",
    "failed": "red",
    "error": "red",
    "not attempted": "yellow",
    "solved": "green",
    "failing": "red",
}
MAX_ROWS = 24


def rows_to_show(n: int, q: int) -> list[int | None]:
    """The rows of a long per-position table worth showing: the first three and those around the failing one
    (None where rows are left out)."""
    if n <= MAX_ROWS:
        return list(range(n))
    keep = sorted({*range(3), *range(max(0, q - 12), min(n, q + 4))})
    out: list[int | None] = []
    for i in keep:
        if out and out[-1] is not None and i != out[-1] + 1:
            out.append(None)
        out.append(i)
    return out


def _table(expl) -> Table:
    columns, rows = explain.table(expl)
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for n, c in enumerate(columns):  # vectors wrap inside their cells; position, token and error columns stay whole
        vector = any(str(row[n]).startswith("[") for row in rows if n < len(row))
        table.add_column(
            c,
            justify="left" if vector or c == "token" else "right",
            no_wrap=not vector,
            overflow="fold",
            min_width=8 if vector else None,
        )
    for i in rows_to_show(len(rows), expl.position):
        if i is None:
            table.add_row(*(["…"] + [""] * (len(columns) - 1)))
            continue
        style = "bold red" if i == expl.position else ("red" if rows[i][-1] == "✗" else "")
        table.add_row(*rows[i], style=style)
    return table


def _quote(tokens, vocab) -> str:
    text = vocab.join(tokens) if vocab is not None else " ".join(tokens)
    return repr(text) if len(text) <= 100 else repr(text[:97] + "…")


def expected_matrix(expected):
    """A structure row's expected side as a sympy matrix: a matrix as it is, a bound (ScoreBound, AtMost: facts) as
    the one symbol that says it."""
    import sympy

    return (
        expected if isinstance(expected, sympy.MatrixBase) else sympy.Matrix([[sympy.Symbol(explain.words(expected))]])
    )


def _structure_diff(what: str, yours, expected) -> Group:
    """Where an exact matrix differs: the entries, and both matrices when they are small."""
    if yours.shape != expected.shape:
        return Group(
            Text(
                f"{what}: yours is {yours.shape[0]} × {yours.shape[1]}, "
                f"expected {expected.shape[0]} × {expected.shape[1]}"
            )
        )
    diff = [(i, j) for i in range(yours.rows) for j in range(yours.cols) if yours[i, j] != expected[i, j]]
    shown = "; ".join(f"[{i}, {j}] yours {yours[i, j]}, expected {expected[i, j]}" for i, j in diff[:8])
    parts: list = [
        Text(
            f"{what}: {len(diff)} entr{'y differs' if len(diff) == 1 else 'ies differ'}: {shown}"
            + (" …" if len(diff) > 8 else "")
        )
    ]
    if yours.rows * yours.cols <= 64:
        parts += [
            Text("yours:", style="bold"),
            matrix_table(yours),
            Text("expected:", style="bold"),
            matrix_table(expected),
        ]
    return Group(*parts)


def target_report(result: TargetResult, path: str = "") -> Group:
    """The readable failure report for one target."""
    parts: list = [Text(f"{ICON[result.status]} {result.label}", style="bold " + STYLE[result.status])]
    if result.status in ("not attempted", "error"):
        parts.append(Text(said(result)))
        return Group(*parts)
    f = result.failure
    if f is None:
        return Group(*parts)
    if result.kind is Kind.STRUCTURE:
        for what, yours, expected, same in result.structure:
            parts.append(Text(f"{'✓' if same else '✗'} {explain.words(what)}", style="green" if same else "red"))
        for what, yours, expected, same in result.structure:
            if not same and tuple(yours.shape) != (1, 1):  # one number (a width, a worst error): its line says it
                parts += [Text(""), _structure_diff(explain.words(what), yours, expected_matrix(expected))]
        return Group(*parts)
    if f.explanation is None:  # a code or mechanism target: its finding
        parts.append(Text(f"found by: {f.stage}"))
        parts.append(Text(explain.words(f.finding)))
        parts += [Text(f"Note: {note.detail}") for note in f.notes]  # a stray write or read, likely its cause
        return Group(*parts)
    e = f.explanation
    trace = f.trace
    vocab = trace.model.vocab
    shrunk = f" and shrunk from {f.found_len} to {len(f.tokens)} tokens" if f.found_len != len(f.tokens) else ""
    parts += [
        Text(f"found by: {f.stage}{shrunk}"),
        Text.assemble(
            ("shortest failing input: ", ""),
            (_quote(f.tokens, vocab), "bold"),
            f" ({len(f.tokens)} token{'' if len(f.tokens) == 1 else 's'})",
        ),
        Text(explain.summary(e)),
        Text(""),
        Text("yours vs expected, per position:", style="bold"),
        _table(e),
    ]
    if e.head is not None:
        l, h = e.head
        labels = trace.tokens(0)
        title = f"attention of head {l}.{h} (rows: queries, columns: keys" + (
            f", {explain.MARKS[e.marks_mean]})" if e.marks else ")"
        )
        parts += [
            Text(""),
            Text(title, style="bold"),
            pattern_heatmap(trace.pattern(l, h)[0], labels, targets=e.marks, max_len=MAX_ROWS),
        ]
    parts += [Text(""), Text.assemble(("hint: ", "bold yellow"), explain.hint(e))]
    return Group(*parts)


def failure_line(result: TargetResult) -> str:
    """One line, untrimmed: the target and what failed first (its shortest input and why), for autograders
    (JUnit's failure message) and a notebook's one-line view."""
    head = f"{ICON[result.status]} {result.label}"
    f = result.failure
    if result.status in ("error", "not attempted") or f is None:
        return " ".join(f"{head}: {said(result)}".split()) if said(result) else head
    if f.explanation is None:  # a structure or code target: what differed
        return " ".join(f"{head}: {explain.words(f.finding)}".split())
    vocab = f.trace.model.vocab if f.trace is not None else None
    n = len(f.tokens)
    return f"{head}: fails on {_quote(f.tokens, vocab)} ({n} token{'' if n == 1 else 's'}): " + " ".join(
        explain.summary(f.explanation).split()
    )


def worst_case(t: TargetResult) -> str:
    """The worst value a passing target's metric took, e.g. "smallest attention on target 0.9971"."""
    if t.worst is None or t.kind is not Kind.BEHAVIOUR:
        return ""
    value = f"{t.worst:.2g}" if higher_is_worse(t.metric) else f"{t.worst:.4f}"  # an error, or a mass or log-prob
    return f"{t.metric} {value}"


def worst_per_metric(targets: list[TargetResult]) -> str:
    """Across a puzzle's passing targets, the worst value of each metric."""
    by_metric: dict[str, TargetResult] = {}
    for t in targets:
        if worst_case(t):
            best = by_metric.get(t.metric)
            worse = best is None or ((t.worst > best.worst) if higher_is_worse(t.metric) else (t.worst < best.worst))
            by_metric[t.metric] = t if worse else best
    return ", ".join(worst_case(t) for t in by_metric.values())


def summary_table(results: list[PuzzleResult], title: str = "circuits puzzles") -> Table:
    """One row per puzzle: its name over its level, its status over the targets met, then the margin or what to do.

    The level and the count sit under the name and the status, not in columns of their own, so that at 80 columns
    the last column keeps about 30 characters a line: "fill in W_Q, W_K" or a failing target reads whole."""
    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("puzzle", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("margin / what to do", overflow="fold", min_width=24)
    for r in results:
        passed = sum(t.status == "passed" for t in r.targets)
        if r.status == "solved":
            note = "; ".join(x for x in (small_short(r.coverage), margins(r.margins), worst_per_metric(r.targets)) if x)
        elif r.status == "not attempted" and r.attempt is not None and r.attempt.missing:
            note = f"fill in {', '.join(r.attempt.missing)}"  # the row names the puzzle, the progress line its file
        elif r.status == "not attempted":
            note = said(r).removeprefix("not attempted: ")
        else:
            bad = next(t for t in r.targets if t.status in ("failed", "error"))
            note = said(bad) if bad.status == "error" else f"fails: {bad.label}"
        level = level_text(r.attempt.puzzle if r.attempt else None)
        name = Text(printable(r.name))
        if level:
            name.append("\n" + level, style="dim")
        status = Text(r.status, style=STYLE.get(r.status, ""))
        if r.targets:
            status.append(f"\n{passed}/{len(r.targets)} target{'s' if len(r.targets) > 1 else ''}", style="dim")
        table.add_row(name, status, printable(note))
    return table


def level_text(puzzle) -> str:
    """ "★★☆ 20m": a puzzle's difficulty and expected minutes, as far as it says ("" for neither)."""
    if puzzle is None:
        return ""
    time = f"{puzzle.minutes}m" if puzzle.minutes else ""
    return " ".join(x for x in (stars(puzzle.difficulty), time) if x)


def progress(results: list[PuzzleResult], bar: int = 20) -> Text:
    """ "solved k of n" with a bar and, on the next line, the next puzzle to open (the first one not solved)."""
    solved = sum(r.status == "solved" for r in results)
    filled = round(bar * solved / len(results)) if results else 0
    line = Text.assemble(f"solved {solved} of {len(results)} ", ("█" * filled, "green"), ("░" * (bar - filled), "dim"))
    nxt = next((r for r in results if r.status != "solved"), None)
    if nxt is None:
        line.append("  every puzzle solved")
    else:
        number = nxt.name.partition("_")[0]
        where = paths.shown(nxt.attempt.path) if nxt.attempt else nxt.name
        line.append(f"\nnext: {where} (circuits watch {int(number) if number.isdigit() else nxt.name})")
    return line


def hints_report(hints, level: int, number: int) -> Group:
    """Hints 1..level of a puzzle, and how to ask for the next one."""
    parts: list = [Text.assemble((f"hint {n + 1} of {len(hints)}: ", "bold yellow"), hints[n]) for n in range(level)]
    if level < len(hints):
        parts.append(Text(f"more: circuits hint {number} --level {level + 1}", style="dim"))
    return Group(*parts)


def first_hint(hints, number: int) -> Text:
    """The puzzle's first hint, under a failing pytest report."""
    more = f" (more: circuits hint {number} --level 2)" if len(hints) > 1 else ""
    return Text.assemble(("\npuzzle hint 1 of " + f"{len(hints)}: ", "bold yellow"), hints[0] + more)


def edited_givens(result: PuzzleResult) -> list[Text]:
    """One line per given the learner's file changed: the shipped puzzle (or the course's) was checked, not their
    copy. A course puzzle's line blames no one: the instructor may have changed the statement since."""
    attempt = result.attempt
    if attempt is None or not attempt.edits:
        return []
    from circuits.checking import curriculum
    from circuits.io import paths

    where = paths.shown(attempt.path)
    shipped = attempt.reference is None or curriculum.is_shipped(attempt.reference)
    lines = []
    for e in sorted(attempt.edits, key=lambda e: e.line or 0):
        at = f" line {e.line}" if e.line else ""
        if shipped:
            did = "deleted; checked as shipped" if e.removed else "changed; checked as shipped"
        else:  # a course's statement may have changed since the workspace was made: no one is blamed
            did = (
                "missing; checked as the course states it"
                if e.removed
                else "differs from the course's; checked as the course states it"
            )
        lines.append(Text(f"! {where}{at}: given `{e.name}` {did}", style="yellow"))
    return lines


def puzzle_report(result: PuzzleResult) -> Group:
    """Everything `circuits check` prints for one puzzle."""
    head = Text(
        f"{result.name} · {result.attempt.puzzle.title if result.attempt else ''} · {result.status}",
        style="bold " + STYLE.get(result.status, ""),
    )
    parts: list = [head, *edited_givens(result)]
    for t in result.targets:
        if t.status in ("failed", "error") or result.status == "not attempted" and t is result.targets[0]:
            parts += [Text(""), target_report(t)]
        else:
            extra = (
                f"  ({worst_case(t)}; {checked(t, result.coverage)})"
                if worst_case(t)
                else (f"  ({tried(t)})" if tried(t) else "")
            )
            parts.append(Text(f"{ICON[t.status]} {t.label}{extra}", style=STYLE[t.status]))
    if seen := coverage(result.coverage):
        parts.append(Text(f"checked on: {seen}", style="dim"))
    for stage in skipped(result.coverage):  # not certified: said, never left to be assumed
        parts.append(Text(f"not checked: {stage}", style="yellow"))
    if result.margins is not None:
        parts.append(Text(f"margins: {margins(result.margins)}"))
    if getattr(result, "cached", False):
        parts.append(
            Text("(solved before: this answer and the library are unchanged; --no-cache checks again)", style="dim")
        )
    else:
        parts.append(Text(f"({result.seconds:.1f} s)", style="dim"))
    return Group(*parts)


__all__ = ["edited_givens", "target_report", "summary_table", "puzzle_report", "progress", "to_text"]
