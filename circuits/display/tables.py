"""Small rich tables the commands print: a scan's ranked heads, a readout yours vs expected."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from circuits.analysis.scan import ScanResult


def title(text: str) -> Text:
    """A bold heading line."""
    return Text(text, style="bold")


def scan_table(result: ScanResult, top: int = 5):
    """A rich table: for each behaviour its best `top` heads, with ✓ on those at or above the threshold."""
    table = Table(
        title=f"Head scan on {result.inputs[0]} × {result.inputs[1]} tokens: mean attention on the target "
        f"over rows that have one (✓ ≥ {result.threshold:g})",
        title_justify="left",
        box=None,
        padding=(0, 1),
    )
    for col, justify in (
        ("behaviour", "left"),
        ("rank", "right"),
        ("head", "left"),
        ("score", "right"),
        ("", "left"),
        ("rows", "right"),
    ):
        table.add_column(col, justify=justify, no_wrap=True)
    for behaviour, scores in result.ranked.items():
        for rank, s in enumerate(scores[:top], 1):
            mark = "✓" if s.score >= result.threshold else ""
            bar = "█" * int(round(s.score * 10))
            table.add_row(
                behaviour if rank == 1 else "", str(rank), s.name, f"{s.score:.3f}", f"{bar:<10} {mark}", str(s.rows)
            )
        table.add_section()
    return table


def readout_table(target: dict, labels: list[str]):
    """One target of `circuits show` per position: the token, what is expected and what the model gives."""
    table = Table(box=None, header_style="bold")
    for col in ("pos", "token", "expected", "yours"):  # vectors wrap inside their cells; pos and token stay whole
        vector = col in ("expected", "yours")
        table.add_column(col, justify="left" if vector else "right", no_wrap=not vector, overflow="fold")
    names = target.get("directions")

    def fmt(v) -> str:
        if v is None:
            return "—"
        if not isinstance(v, list):
            return str(v)
        if names:  # by direction, as check prints them: equal vectors read the same whatever the width
            return ", ".join(f"{n} {x:.3g}" for n, x in zip(names, v) if abs(x) >= 1e-3) or "0"
        return "[" + ", ".join(f"{x:.3g}" for x in v) + "]"

    for i, tok in enumerate(labels):
        e = target["expected"][i] if i < len(target["expected"]) else None
        table.add_row(str(i), repr(tok), fmt(e), fmt(target["output"][i]))
    return table
