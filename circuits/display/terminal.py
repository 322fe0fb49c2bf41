"""The console: as wide as the terminal, colour only on a terminal, no space left at a line's end; and plain text
of anything rich renders (a pytest report, a test)."""

from __future__ import annotations

import re

from rich.console import Console


def terminal_width() -> int:
    """The terminal's width: $COLUMNS if set, else the terminal's own, else 80 (a pipe, a CI log)."""
    import os
    import shutil

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size((80, 24)).columns


def console(file=None, width: int | None = None, color: bool | None = None) -> Console:
    """A console as wide as the terminal (see terminal_width) that drops colour codes when the output is not a
    terminal (CI logs, pipes), and leaves no space at the end of a line where it wrapped one."""
    kwargs = {} if color is None else {"force_terminal": color, "no_color": not color}
    if file is not None:  # written where asked, even inside a notebook (where rich would display it)
        kwargs["force_jupyter"] = False
    return Console(file=_Trimmed(file), width=width or terminal_width(), highlight=False, soft_wrap=False, **kwargs)


class _Trimmed:
    """A file (standard output when None, looked up at each write) whose lines lose their trailing spaces: rich
    keeps the space where it wraps a sentence, and a copied report should not carry it."""

    _END = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)(?=\r?\n)")  # spaces, then any colour codes, then the line's end

    def __init__(self, file):
        self._file = file

    @property
    def file(self):
        import sys

        return self._file if self._file is not None else sys.stdout

    def write(self, text: str) -> int:
        return self.file.write(self._END.sub(r"\1", text))

    def __getattr__(self, name):  # isatty, fileno, flush, encoding: the file's own
        return getattr(self.file, name)


def to_text(renderable, width: int = 120) -> str:
    """Render to plain text (no colour codes), e.g. for a pytest report or a test."""
    import io

    c = Console(
        width=width, no_color=True, force_terminal=False, force_jupyter=False, highlight=False, file=io.StringIO()
    )  # force_jupyter: inside a notebook rich would display it, not write it
    c.print(renderable)
    return "\n".join(line.rstrip() for line in c.file.getvalue().split("\n"))  # no space left where rich wrapped
