"""What the plugin's parts share: a failure as pytest shows it, the stash keys of a run, what a puzzle file is named."""

from __future__ import annotations

import re

import pytest


class Failure:
    """A failure as pytest shows it: the report, and its one-line summary as the crash message.

    The line is whole where a program reads it (JUnit's failure message, for autograders); for the terminal's
    short summary it is trimmed to the width once every other plugin has seen the report (pytest pastes it
    untrimmed on CI). A plain string longrepr would be pasted whole into that summary.
    """

    def __init__(self, text: str, line: str):
        self.text = text
        self.reprcrash = _Crash(line)

    def toterminal(self, out) -> None:
        for line in self.text.splitlines():
            out.line(line)

    def __str__(self) -> str:
        return self.text


class _Crash:
    def __init__(self, message: str):
        self.message = message

    def __str__(self) -> str:  # --tb=line prints it
        return self.message


def _first_line(text: str) -> str:
    return (re.sub(r"\x1b\[[0-9;]*m", "", text).strip().splitlines() or [""])[0]


_RESULTS = pytest.StashKey[list]()
_NOT_CHECKED = pytest.StashKey[list]()  # files that look like puzzles in folders the plugin does not take over
_NAME = re.compile(r"^\d\d_.*\.py$")  # as loader.puzzle_files globs: [0-9][0-9]_*.py
_FOLDERS = ("puzzles", "solutions")
NAME_CHARS = 28  # of a target's label in its test name: "FAILED puzzles/NN_longest_name.py::2. …" fits 80 columns

_CONFIG: list = []  # the running session's config, for hooks that are given only a report
