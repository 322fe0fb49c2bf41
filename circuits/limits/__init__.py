"""Running a puzzle file's code under a time limit, so that no file can hang, kill or litter the checker.

A puzzle file's import, its puzzle's validation and its check each run on a daemon worker thread, in a
copy of the caller's context (its np.errstate, its decimal context), while the caller waits at most
IMPORT_SECONDS / CHECK_SECONDS of the worker's own time: the CPU time it spends while it computes, the wall
time while it waits (a sleep, a blocked read), so a busy machine slows a check but never stops it. On the way
the worker says what it is doing (`doing("checking target …")`), so a file that runs out of time is named with
what it was doing. While the worker runs:
`os._exit` raises instead of ending the process, `sys.stdout` / `sys.stderr` cannot be closed, no
`__pycache__` is written, and every thread the file starts is a daemon, so none keeps the command
alive after its report.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import os
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, TypeVar

from circuits.errors import CircuitError
from circuits.limits.clock import Clock, thread_cpu, thread_queued

IMPORT_SECONDS = 30.0  # one puzzle file's import (its givens and Puzzle); each reference file takes under 0.1 s
CHECK_SECONDS = 120.0  # one puzzle's check, margins included; the slowest reference solution takes about 3 s
# One target's share of a check: the time spent on it over every stage (its spec, its scoring), margins included.
# The slowest target of a shipped puzzle takes about 1.2 s, so a spec stuck on long inputs stops after 10 s, not 120.
TARGET_SECONDS = 10.0
AUDIT_SECONDS = 300.0  # `circuits audit`'s mutants; the largest shipped audit (puzzle 08, 976 mutants) takes ~100 s
ENV = {
    "import": "CIRCUITS_IMPORT_SECONDS",
    "check": "CIRCUITS_CHECK_SECONDS",
    "target": "CIRCUITS_TARGET_SECONDS",
    "audit": "CIRCUITS_AUDIT_SECONDS",
}  # override any, in seconds
DEFAULTS = {"import": IMPORT_SECONDS, "check": CHECK_SECONDS, "target": TARGET_SECONDS, "audit": AUDIT_SECONDS}
REAL_EXIT = os._exit  # what os._exit is outside a guarded run (an audit's forked copy ends with it)
QUIET = "circuits_fork_safe"  # set on a thread that holds no lock a forked copy could need (it waits: checking/cores)
TARGET = "checking target "  # how an activity that counts against the target limit begins
POLL = 0.05  # seconds between two looks at a running worker

T = TypeVar("T")
_doing: dict[int, str] = {}  # worker thread id -> what it is doing now (with the detail, for messages)
_since: dict[int, tuple[str, float, str]] = {}  # worker thread id -> (activity, when it began, detail)
_spent: dict[int, dict[str, float]] = {}  # worker thread id -> seconds spent so far on each earlier activity
_charged: dict[int, float] = {}  # worker thread id -> its own seconds so far (see Clock), updated every look
_warned: dict[tuple[str, int, str, str], int] = {}  # (file, line, category, message) -> times, while a worker ran


class TimeLimit(BaseException):
    """Raised inside a worker that ran out of time, to stop it (a BaseException: `except Exception` can't keep it)."""


class ExitCalled(BaseException):
    """`os._exit(code)` called by a puzzle file's code."""

    def __init__(self, code: int = 0):
        super().__init__(code)
        self.code = code


def seconds(which: str) -> float:
    """The limit for "import", "check", "target" or "audit": the environment variable if set, else the constant."""
    default = DEFAULTS[which]
    raw = os.environ.get(ENV[which], "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise CircuitError(f"{ENV[which]}={raw!r} is not a positive number of seconds")
    return value


def doing(what: str, detail: str = "") -> None:
    """Record what the current worker is doing (`detail`, e.g. " on 3 inputs of length 21", only for the message);
    time spent on one `what` adds up across calls, for the limit of a target."""
    ident = threading.get_ident()
    now = _charged.get(ident, 0.0)
    before = _since.get(ident)
    if before is not None and before[0] != what:
        spent = _spent.setdefault(ident, {})
        spent[before[0]] = spent.get(before[0], 0.0) + now - before[1]
    _since[ident] = (what, now if before is None or before[0] != what else before[1], detail)
    _doing[ident] = what


def _over(ident: int, limit: float) -> bool:
    """Whether the worker's current activity is a target that has had more than `limit` seconds in all."""
    what, began, _ = _since.get(ident, ("", 0.0, ""))
    if not what.startswith(TARGET):
        return False
    return _spent.get(ident, {}).get(what, 0.0) + _charged.get(ident, 0.0) - began > limit


def now(default: str = "") -> str:
    return _doing.get(threading.get_ident(), default)


def quoted(label: str, n: int = 60) -> str:
    """A target's label in quotes, cut to `n` characters."""
    return f'"{label}"' if len(label) <= n else f'"{label[: n - 1]}…"'


def shown_input(tokens) -> str:
    return repr("".join(tokens) if all(len(t) == 1 for t in tokens) else " ".join(tokens))


# circuits' own packages that check
CHECKER = ("checking", "targets", "explain", "limits", "audit", "sealed", "workspace")


def in_their_file(filename: str, package: bool = False) -> bool:
    """Whether code at `filename` is the learner's (or the author's): outside the packages that check (CHECKER;
    with `package`, the whole circuits package), Python and installed packages."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # circuits/
    ours = (root,) if package else tuple(os.path.join(root, p) + os.sep for p in CHECKER)
    theirs = tuple({os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    return not str(filename).startswith((*ours, *theirs, "<"))


def where_raised(e: BaseException, path: Path) -> str:
    """` at line N`: the last line of `path` in `e`'s traceback, or nothing when `path` is not in it."""
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        if Path(frame.filename) == path:
            return f" at line {frame.lineno}"
    return ""


def file_frames(e: BaseException) -> list[traceback.FrameSummary]:
    """The frames of `e`'s traceback in the learner's code: outside circuits, Python and installed packages."""
    return [f for f in traceback.extract_tb(e.__traceback__) if in_their_file(f.filename)]


def blame(e: BaseException, on: str = "") -> CircuitError:
    """`the puzzle's spec raised ZeroDivisionError at line 40 on input 'ab' while checking target "…": division by
    zero`."""
    frames = file_frames(e)
    name = ("spec" if frames[0].name == "spec" else f"{frames[0].name}()") if frames else "code"
    at = f" at line {frames[-1].lineno}" if frames else ""
    on = f" on input {on}" if on else ""
    if isinstance(e, ExitCalled):
        return CircuitError(f"the puzzle's {name} called os._exit(){at}{on} while {now('checking')}; remove it")
    if isinstance(e, MemoryError):  # the size of what was built, not a mistake in the code that happened to allocate
        return CircuitError(
            f"out of memory{on} while {now('checking')}: {e or 'MemoryError'}; the model the answer "
            "builds is too large for the checker (fewer hidden units, heads or tokens need less)"
        )
    said = f": {e}" if str(e) else ""
    return CircuitError(
        f"the puzzle's {name} raised {type(e).__name__}{at}{on} while {now('checking')}{said} "
        "(a mistake in the puzzle's own code, not in the answer)"
    )


@contextlib.contextmanager
def blaming(batch: list, one: Callable):
    """The puzzle file's code raising inside: one line naming it and the first input of `batch` on which `one`
    raises."""
    try:
        yield
    except (CircuitError, TimeLimit):
        raise
    except BaseException as e:  # noqa: BLE001 - the learner's code raising is their mistake, said in one line
        culprit = ""
        for item in sorted(batch, key=len):  # the error path only: the shortest input that raises, one at a time
            try:
                one(item)
            except TimeLimit:
                raise
            except BaseException:  # noqa: BLE001
                culprit = shown_input(item)
                break
        raise blame(e, culprit) from e


class _Limit(NamedTuple):
    """One limit a worker runs under: until when, how many seconds that was, and whom a message names."""

    deadline: float
    seconds: float
    which: str | None  # "import", "check", …; None: a session's own, with no limit
    culprit: str
    source: Path | None


_limits: dict[int, list[_Limit]] = {}  # worker thread id -> the limits it runs under, the outermost first


def run(fn: Callable[[], T], which: str, what: str, culprit: str, source: Path | None = None) -> T:
    """`fn()` on a worker thread: its result or its exception, or a CircuitError naming `culprit` and what it
    was doing if it takes longer than the limit for `which` ("import" or "check").

    The worker runs in a copy of the caller's context, so what the caller set there (np.errstate, a decimal
    localcontext) holds in the puzzle file's code as if it ran on the caller's own thread. Called on a
    session's worker (see session), `fn` runs right there, under this limit as well."""
    ident = threading.get_ident()
    if ident in _limits:
        return _inline(fn, which, what, culprit, source, ident)
    return _on_worker(fn, which, what, culprit, source)


def session(fn: Callable[[], T], culprit: str) -> T:
    """`fn()` on one worker thread for every stage of one file: each limits.run inside it (the import, the
    validation, the check) runs on that worker under its own limit, instead of starting a worker of its own."""
    return _on_worker(fn, None, "", culprit, None)


def _inline(fn: Callable[[], T], which: str, what: str, culprit: str, source: Path | None, ident: int) -> T:
    limit = seconds(which)
    outer = _since.get(ident)
    _limits[ident].append(_Limit(_charged.get(ident, 0.0) + limit, limit, which, culprit, source))
    doing(what)
    try:
        return fn()
    finally:
        _limits[ident].pop()
        if outer is not None:
            doing(outer[0], outer[2])


def _on_worker(fn: Callable[[], T], which: str | None, what: str, culprit: str, source: Path | None) -> T:
    limit = seconds(which) if which is not None else float("inf")
    step = seconds("target") if which in ("check", None) else None
    box: dict = {}
    context = contextvars.copy_context()
    own = _Limit(limit, limit, which, culprit, source)  # deadlines are in the worker's own seconds, from 0

    def work():
        forget_this_thread()  # nothing another thread of the same ident left counts against this one
        _limits[threading.get_ident()] = [own]
        if what:
            doing(what)
        try:
            box["value"] = fn()
        except TimeLimit:
            pass
        except BaseException as e:  # noqa: BLE001 - handed to the caller as is
            box["error"] = e

    worker = threading.Thread(
        target=context.run, args=(work,), name=f"circuits: {what or 'session'} {culprit}", daemon=True
    )
    waiter = threading.current_thread()
    quiet = getattr(waiter, QUIET, False)
    with _guarded():
        setattr(waiter, QUIET, True)  # it only waits for the worker from here: the worker may fork (checking/cores)
        try:
            worker.start()
        except BaseException:
            setattr(waiter, QUIET, quiet)
            raise
        clock = Clock(thread_cpu(worker.ident), thread_queued(worker.native_id))
        stopped = ""
        try:
            while worker.is_alive() and not stopped:
                now = _charged[worker.ident] = clock.tick()
                frames = list(_limits.get(worker.ident, ())) or [own]
                due, inner = min(frames, key=lambda f: f.deadline), frames[-1]
                over = (
                    step is not None
                    and inner.which == "check"
                    and worker.ident is not None
                    and _over(worker.ident, step)
                )
                if now >= due.deadline or over:
                    was = _doing.get(worker.ident, what) + _since.get(worker.ident, ("", 0, ""))[2]
                    hit = due if now >= due.deadline else inner
                    took, env = (hit.seconds, ENV[hit.which]) if now >= due.deadline else (step, ENV["target"])
                    stopped = (
                        f"{hit.culprit}: {was} took longer than {took:g} s and was stopped"
                        f"{_line_in(worker, hit.source)} (an endless loop, or waiting for input? to allow "
                        f"more time, set {env})"
                    )
                else:
                    worker.join(min(POLL, due.deadline - now))
        except BaseException:  # Ctrl-C: stop the worker too
            _stop(worker)
            _forget(worker)
            raise
        finally:
            setattr(waiter, QUIET, quiet)
        if stopped:
            _stop(worker)
            _forget(worker)
            raise CircuitError(stopped)
    _forget(worker)
    if "error" in box:
        raise box.pop("error")
    return box["value"]


def _forget(worker: threading.Thread) -> None:
    for table in (_doing, _since, _spent, _limits, _charged):
        table.pop(worker.ident, None)


def forget_this_thread() -> None:
    """What `doing` recorded for the calling thread, dropped: a helper thread ending (checking/cores.threaded), so a
    later thread given the same ident starts from nothing."""
    ident = threading.get_ident()
    for table in (_doing, _since, _spent, _charged):
        table.pop(ident, None)


def _line_in(worker: threading.Thread, source: Path | None) -> str:
    """` at line N`: where in `source` the worker is now, if it is running that file's code."""
    frame = sys._current_frames().get(worker.ident) if source is not None else None
    while frame is not None:
        if frame.f_code.co_filename == str(source):
            return f" at line {frame.f_lineno}"
        frame = frame.f_back
    return ""


def _stop(worker: threading.Thread) -> None:
    """Raise TimeLimit in the worker at its next Python instruction (one blocked in C stays, but is a daemon)."""
    if worker.ident is None or not worker.is_alive():
        return
    hit = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(TimeLimit))
    if hit > 1:  # cannot happen for one thread id, but if it does, undo it as the C API asks
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), None)


class _Unclosable:
    """A stream whose close() does nothing: a puzzle file closing sys.stdout must not silence the report."""

    def __init__(self, stream):
        self._stream = stream

    def close(self):
        pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _raise_exit(code=0):
    raise ExitCalled(code)


def _daemon_start(self, _start=threading.Thread.start):
    if not self._started.is_set():
        self.daemon = True  # a thread a puzzle file leaves running must not keep the command alive
    return _start(self)


def take_warnings() -> list[tuple[str, int, str, str, int]]:
    """The warnings a puzzle file's code raised (numpy's RuntimeWarnings, …) since last asked, as (file, line,
    category, message, times): held back while it runs, so the command says them after its report, in one line."""
    out = [(*key, n) for key, n in _warned.items()]
    _warned.clear()
    return out


def held_warning(file: str, line: int, category: str, message: str) -> None:
    """A warning a puzzle file raised in its own process, held back here like one raised in this process."""
    key = (file, line, category, " ".join(message.split()))
    _warned[key] = _warned.get(key, 0) + 1


def warnings_line(seen, shown: Callable[[str], str] = str) -> str:
    """`puzzles/x.py line 51: RuntimeWarning: divide by zero encountered in divide (and 2 more warnings)`."""
    if not seen:
        return ""
    file, line, category, message, _ = seen[0]
    more = sum(n for *_, n in seen) - 1
    return f"{shown(file)} line {line}: {category}: {message}" + (
        f" (and {more} more warning{'s' if more > 1 else ''})" if more else ""
    )


def _held_back(show):
    def record(message, category, filename, lineno, file=None, line=None):
        from circuits.errors import CircuitWarning

        if issubclass(category, CircuitWarning) or not in_their_file(
            filename, package=True
        ):  # circuits' own, pytest's…: as usual
            return show(message, category, filename, lineno, file, line)
        key = (str(filename), int(lineno), category.__name__, " ".join(str(message).split()))
        _warned[key] = _warned.get(key, 0) + 1

    return record


@contextlib.contextmanager
def _guarded():
    import warnings

    saved = (os._exit, sys.stdout, sys.stderr, sys.dont_write_bytecode, threading.Thread.start)
    shown = warnings.showwarning
    warnings.showwarning = _held_back(shown)
    posix = sys.modules.get("posix") or sys.modules.get("nt")
    os._exit = _raise_exit
    if posix is not None:
        posix._exit = _raise_exit
    sys.stdout = _Unclosable(sys.stdout) if sys.stdout is not None else None
    sys.stderr = _Unclosable(sys.stderr) if sys.stderr is not None else None
    sys.dont_write_bytecode = True  # helper modules a puzzle file imports leave no __pycache__
    threading.Thread.start = _daemon_start
    try:
        yield
    finally:
        os._exit, sys.stdout, sys.stderr, sys.dont_write_bytecode, threading.Thread.start = saved
        warnings.showwarning = shown
        if posix is not None:
            posix._exit = saved[0]
