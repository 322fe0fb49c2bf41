"""`circuits watch`: check the current puzzle each time its file is saved, and move on once it is solved."""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path

from rich.console import Group
from rich.text import Text

from circuits.checking.loader import find, puzzle_files
from circuits.checking.pipeline import load
from circuits.display import words
from circuits.display.report import ICON, STYLE, edited_givens, progress, target_report
from circuits.display.terminal import console
from circuits.errors import CircuitError
from circuits.explain import cached_check
from circuits.io import paths
from circuits.io.paths import real
from circuits.limits import take_warnings, warnings_line

POLL = 0.1  # seconds between two looks at the file's modification time (and at the keyboard)
KEYS = "save the file to check it again · h = next hint · n = next puzzle · q = quit (then Enter)"


def _stamp(path: Path):
    """What changes when an editor saves a file, in place or by renaming a new one over it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _check(path: Path, use_cache: bool):
    """The result of checking one puzzle file, or the one line saying why it cannot be loaded."""
    try:
        attempt = load(path)
    except CircuitError as e:
        return None, str(e)
    result = cached_check(attempt, use_cache, margins=False)  # the verdict at once: watch shows no margins
    if result.status == "error":
        return result, words.said(result)
    return result, ""


def earliest_failure(result):
    """The failing target earliest in the circuit (its layer, then the puzzle's order): later ones may only echo it."""
    targets = list(result.attempt.puzzle.targets) if result.attempt is not None else []
    bad = [n for n, t in enumerate(result.targets) if t.status in ("failed", "error")]
    if not bad:
        return None
    stage = lambda n: targets[n].stage if n < len(targets) else float("inf")  # noqa: E731
    return result.targets[min(bad, key=lambda n: (stage(n), n))]


def compact(result) -> Group:
    """The watch report: the earliest failure in the circuit in full, first, then one line for every other target."""
    parts: list = [
        Text(
            f"{result.name} · {result.attempt.puzzle.title} · {result.status}",
            style="bold " + STYLE.get(result.status, ""),
        ),
        *edited_givens(result),
    ]
    first = earliest_failure(result)
    if first is not None and result.status != "not attempted":
        parts += [Text(""), target_report(first), Text("")]
    for t in result.targets:
        if t is not first:  # the first failure's own report starts with its line
            parts.append(Text(f"{ICON[t.status]} {t.label}", style=STYLE[t.status]))
    if result.status == "not attempted":
        parts.append(Text(words.said(result)))
    return Group(*parts)


def certified(result) -> str:
    """What a solved check established, in one line."""
    seen = words.coverage(result.coverage)
    n = sum(t.checked for t in result.targets)
    return f"every target holds on {seen}" if seen else f"every target passes ({n:,} checks)"


class _Keys:
    """Lines typed on stdin (h, n, q), read without blocking; nothing when stdin is closed or not selectable."""

    def __init__(self, stream):
        self.stream = stream
        try:
            self.fd = stream.fileno() if stream is not None else None
        except (OSError, ValueError, AttributeError):
            self.fd = None

    def wait(self, seconds: float) -> str | None:
        if self.fd is None:
            time.sleep(seconds)
            return None
        try:
            ready, _, _ = select.select([self.fd], [], [], seconds)
        except (OSError, ValueError):  # not selectable (e.g. Windows consoles): poll the file only
            self.fd = None
            return None
        if not ready:
            return None
        line = self.stream.readline()
        if line == "":  # end of input: keep watching the file
            self.fd = None
            return None
        return line.strip().lower()[:1] or None


def watch(name: str | None = None, use_cache: bool = True, stdin=None, poll: float = POLL) -> int:
    """Check the first unsolved puzzle (or `name`), again on every save; on success say so and move to the next."""
    files = puzzle_files(False)
    if not files:
        raise CircuitError("no puzzle files found: run this inside the project (it looks for puzzles/)")
    c = console()
    keys = _Keys(sys.stdin if stdin is None else stdin)
    i = 0
    if name:
        wanted = [real(f) for f in files]
        named = real(find(name, False))
        if named not in wanted:
            raise CircuitError(
                f"{name}: watch follows the puzzles in {paths.shown(files[0].parent)}/; name one of them"
            )
        i = wanted.index(named)
    skip_solved, moved, step = name is None, False, ""
    opened = i if name else None  # a puzzle named on the command line stays open, solved or not, until `n`
    c.print(Text(f"circuits watch: {KEYS}; Ctrl-C ends it", style="dim"))
    while True:
        if i >= len(files):  # past the last puzzle: back to the first one not solved yet, if any
            i = _first_unsolved(files, use_cache)
            if i is None:
                break
            moved = True
        path = files[i]
        stamp = _stamp(path)  # before checking: a save during the check is seen afterwards
        result, error = _check(path, use_cache)
        warned = warnings_line(take_warnings(), paths.shown)  # held back while the file ran: said after its report
        if result is not None and result.status == "solved" and i != opened:
            said = not skip_solved or not getattr(result, "cached", False)  # solved before: passed over quietly
            if said:
                what = "solved before (unchanged)" if getattr(result, "cached", False) else "solved"
                c.print(Text(f"✓ {result.name} {what}: {certified(result)}", style="bold green"))
            _margins_after(result, use_cache)
            i, skip_solved, moved = i + 1, True, moved or said
            continue
        if moved:  # the way here stays on screen: what was solved, and where we are now
            c.print(Text(f"→ next: {paths.shown(path)}", style="bold"))
        elif step == "saved" and c.is_terminal:
            c.clear()  # the same puzzle again: only its new report
        skip_solved = moved = False
        if result is None or result.attempt is None or (error and result.status == "error"):
            c.print(Text(f"! {error}", style="bold red"))
        else:
            c.print(compact(result))
            _margins_after(result, use_cache)
        if warned:
            c.print(Text(f"note: the puzzle file's code warned: {warned}", style="yellow"))
        hints = list(result.attempt.puzzle.hints) if result is not None and result.attempt else []
        if result is None or result.status != "solved":  # a solved puzzle (opened by name) asks no "stuck?"
            _offer(c, hints, 0)
        c.print(Text(f"watching {paths.shown(path)} · {KEYS}", style="dim"))
        step = _wait(c, keys, path, stamp, hints, poll)
        if step == "q":
            return 0
        if step == "n":
            i, moved, opened = i + 1, True, None
    _progress(c, use_cache)
    return 0


def _margins_after(result, use_cache: bool) -> None:
    """A new solved verdict's margins, measured once it is on screen and kept with it, so `circuits check` and
    pytest answer from the cache."""
    if getattr(result, "cached", False) or not use_cache or result.margins is not None:
        return
    from circuits.checking.cache import store
    from circuits.checking.checker import measure_margins

    measured = measure_margins(result)
    if measured.margins is not None:
        store(measured, margins=True)


def _first_unsolved(files: list[Path], use_cache: bool) -> int | None:
    """The index of the first puzzle file that is not solved (from the cache where it can be), or None."""
    for n, path in enumerate(files):
        result, _ = _check(path, use_cache)
        if result is None or result.status != "solved":
            return n
    return None


def _offer(c, hints: list[str], shown: int) -> None:
    if shown < len(hints):
        c.print(Text(f"stuck? h = hint {shown + 1} of {len(hints)}", style="yellow"))


def _wait(c, keys: _Keys, path: Path, stamp, hints: list[str], poll: float) -> str:
    """Until the file is saved ("saved"), or the learner asks for the next puzzle ("n") or to quit ("q"); hints on h."""
    shown = 0
    while True:
        key = keys.wait(poll)
        if key in ("q", "n"):
            return key
        if key == "h":
            if shown < len(hints):
                c.print(Text.assemble((f"hint {shown + 1} of {len(hints)}: ", "bold yellow"), hints[shown]))
                shown += 1
                _offer(c, hints, shown)
            else:
                c.print(Text("no more hints for this puzzle", style="dim"))
        if _stamp(path) != stamp:
            c.print(Text(f"{paths.shown(path)} changed: checking…", style="dim"))
            return "saved"


def _progress(c, use_cache: bool) -> None:
    """After the last puzzle: solved k of n, and the first one still open."""
    from circuits.checking.checker import PuzzleResult

    files = puzzle_files(False)
    results = [_check(f, use_cache)[0] for f in files]
    c.print(progress([r if r is not None else PuzzleResult.unloaded(f, "cannot load") for r, f in zip(results, files)]))
