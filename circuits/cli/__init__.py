"""The `circuits` command: watch, list, check, hint, reset, show and analyze puzzles; scan real models.

parser     every verb's arguments
puzzles    the puzzle file a command names, loaded
learner    init, watch, list, check, hint, reset
models     show, analyze, scan
authoring  new, audit (authors) and grade (instructors)
"""

from __future__ import annotations

import errno
import os
import sys

from circuits.cli.authoring import cmd_audit, cmd_grade, cmd_new
from circuits.cli.learner import cmd_check, cmd_hint, cmd_init, cmd_list, cmd_reset, cmd_watch
from circuits.cli.models import (  # noqa: F401 - re-exported: cli is where callers look
    MAX_TOKENS,
    analyze_command,
    check_length,
    cmd_analyze,
    cmd_scan,
    cmd_show,
    shown_targets,
)
from circuits.cli.parser import FORCE_HELP, _parser  # noqa: F401 - re-exported
from circuits.cli.puzzles import _console, _load, _puzzle_file, _shown  # noqa: F401 - re-exported
from circuits.errors import CircuitError


def main(argv: list[str] | None = None, served: bool = False) -> int:
    """The `circuits` command; `served`: this is the warm server's fork running it (cli/server.py)."""
    from circuits.errors import interrupts_as_usual

    argv = sys.argv[1:] if argv is None else argv
    interrupts_as_usual()  # from here Ctrl-C is a KeyboardInterrupt, which _guard turns into one line
    if not served:
        from circuits.cli.server import client

        code = client(argv)  # the warm server's answer, or None: run here, as before
        if code is not None:
            return code
    if sys.stdout is None:  # started with stdout closed (`circuits … >&-`): output goes nowhere, the exit code stays
        sys.stdout = open(os.devnull, "w", encoding="utf-8")

    def run():
        args = _parser().parse_args(argv)
        if args.command is None:
            _parser().print_help()
            return 2
        if args.command in SEALED and not _reference_only(args):
            _warm()
        return COMMANDS[args.command](args)

    return _guard(run, "circuits scan" if argv[:1] == ["scan"] else "circuits")  # scan's lines name it


SEALED = ("check", "list", "watch", "show", "analyze", "hint", "reset")  # commands that run a learner's file


def _reference_only(args) -> bool:
    """Whether the command runs only reference solutions (`--solution`, `list --solutions`): they run in this
    process, trusted, so no warm process for a learner's file is started (it would only compete for the cores)."""
    return bool(getattr(args, "solution", False) or getattr(args, "solutions", False))


def _warm() -> None:
    """Start the warm process that runs learners' files (sealed/) now, so it is ready when needed."""
    from circuits.sealed import sandbox

    try:
        sandbox.warm()
    except (OSError, sandbox.SandboxError):  # a load starts a fresh process instead, and says why if it cannot
        pass


def _warn(message, category, filename, lineno, file=None, line=None):
    print(f"circuits: warning: {message}", file=sys.stderr)


def _guard(run, prog: str = "circuits") -> int:
    """Run a command: a mistake, Ctrl-C or a closed output is one line on stderr (or none), never a traceback."""
    import warnings

    from circuits.errors import CircuitWarning

    old = warnings.showwarning
    warnings.showwarning = lambda m, c, *a, **k: (
        _warn(m, c, *a, **k) if issubclass(c, CircuitWarning) else old(m, c, *a, **k)
    )
    try:
        code = run()
        sys.stdout.flush()  # a closed or full output fails here, inside the guard, not at exit
        _held_warnings()
        return code
    except CircuitError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        _held_warnings()
        return 2
    except KeyboardInterrupt:
        from circuits.errors import INTERRUPTED

        print(INTERRUPTED, file=sys.stderr)
        return 130
    except BrokenPipeError:  # `circuits … | head`: the reader stopped; exit 1 as Python's docs and rich do
        _discard_stdout()
        return 1
    except MemoryError:
        print(
            f"circuits: out of memory; try a shorter input (at most {MAX_TOKENS} tokens without n_ctx)", file=sys.stderr
        )
        return 2
    except OSError as e:
        if e.filename is not None:  # a file the command opened: not a bug in circuits, so one line
            print(f"{prog}: {e.filename}: {e.strerror or e}", file=sys.stderr)
            return 2
        if e.errno in (errno.ENOSPC, errno.EIO, errno.EBADF):  # writing the output failed
            _discard_stdout()
            print(f"circuits: cannot write the output: {e.strerror or e}", file=sys.stderr)
            return 2
        raise
    finally:
        warnings.showwarning = old


def _held_warnings() -> None:
    """The warnings a puzzle file's code raised (numpy's divide by zero, …), after the report: one line, paths
    as the learner types them, never before the report with absolute paths."""
    from circuits.limits import take_warnings, warnings_line

    line = warnings_line(take_warnings(), _shown)
    if line:
        print(f"circuits: note: the puzzle file's code warned: {line}", file=sys.stderr)


def _discard_stdout() -> None:
    """Send what is still buffered for stdout nowhere, so the exit does not fail on it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


COMMANDS = {
    "init": cmd_init,
    "watch": cmd_watch,
    "list": cmd_list,
    "check": cmd_check,
    "hint": cmd_hint,
    "reset": cmd_reset,
    "show": cmd_show,
    "analyze": cmd_analyze,
    "scan": cmd_scan,
}
COMMANDS.update({"new": cmd_new, "audit": cmd_audit, "grade": cmd_grade})
