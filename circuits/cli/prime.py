"""The warm server's primed template: a fork of the server that has checked one puzzle's shipped reference
solution (and the next puzzle's), so its inputs, samples and spec tables are computed (what kept.py keeps), and
that then forks the commands in the server's place. A learner's second `circuits check N` starts where the first
one's arithmetic left off, and so does the first `check N+1`.

The server (server.py) starts a template for the puzzle a `check` command named once no command is running. A
template that is still priming never delays a command: the server stops it (SIGSTOP) and forks the command
itself, as without a template, then lets it go on. Once the template says it is ready, the server hands it each
command (the request, the connection and the terminal, over a socket pair) and it forks the command exactly as
the server would. What a template keeps is a pure cache of a function of its key (kept.py), so a command it
forks gives the same verdict and report as a fresh process. It runs only a shipped reference file (never a
learner's, a course's or an author's), prints nothing, writes nothing, and ends with the server (PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
from pathlib import Path

from circuits.cli.fork import fork_command, named, reap
from circuits.cli.wire import ACCEPT_SECONDS

PRIMING, READY = b"circuits-warmup", b"circuits-primed"  # a template's name in `ps` (/proc/PID/comm, 15 bytes)


def puzzle_of(argv: list) -> str | None:
    """The puzzle a served command checks, as named on its command line, or None: only `check` primes."""
    if not argv or argv[0] != "check":
        return None
    from circuits.cli.parser import _parser
    from circuits.errors import CircuitError

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            args = _parser().parse_args([str(a) for a in argv])
    except (SystemExit, CircuitError):  # the command itself says what is wrong
        return None
    return args.puzzle


def reference(argv: list, cwd: str) -> Path | None:
    """The shipped reference solution of the puzzle `argv` checks, as the command run in `cwd` finds it, or None
    (not a check, a course's own puzzle, an author's file, no such puzzle: a template runs shipped files only)."""
    puzzle = puzzle_of(argv)
    if puzzle is None:
        return None
    from circuits.checking import curriculum
    from circuits.cli.puzzles import _puzzle_file
    from circuits.errors import CircuitError
    from circuits.io.paths import real

    here = os.getcwd()
    try:
        os.chdir(cwd)
        path = _puzzle_file(puzzle, True)
        return real(path) if curriculum.is_shipped(path) else None  # one name per file (solutions/ is a link in a
        # clone): a check of it by another name is not a new puzzle to prime
    except (CircuitError, OSError, ValueError):
        return None
    finally:
        os.chdir(here)


def prime(path: Path) -> bool:
    """Check the shipped reference `path` in this process, margins included, so its puzzle's memos are warm;
    whether it was checked (it raising loses nothing: a command computes what it needs)."""
    from circuits.checking import checker
    from circuits.checking.pipeline import load

    try:
        checker.check(load(path))
    except Exception:  # noqa: BLE001 - priming is only a head start
        return False
    return True


def following(path: Path) -> Path | None:
    """The shipped reference of the puzzle after `path`'s, or None (the last): the one a learner checks next."""
    from circuits.checking import curriculum

    ids = curriculum.ids()
    at = ids.index(path.stem) if path.stem in ids else len(ids)
    after = path.parent / f"{ids[at + 1]}.py" if at + 1 < len(ids) else None
    return after if after is not None and after.is_file() else None


def template(chan: socket.socket, path: Path, main, server: int) -> None:
    """The template's life, in the server's fork: prime the puzzle after `path`'s, then `path` (the last primed
    is the last a memo drops), say so on `chan`, then fork each command the server hands over, answering with
    its pid. Never returns (it must not unwind into the server's loop)."""
    try:
        name = _become(server)
        from circuits.sealed import processes

        processes.forsake()  # the server's warm process stays the server's
        after = following(path)
        if after is not None:
            prime(after)  # a learner who solves this puzzle checks that one next: its first check is warm too
        if not prime(path):
            return
        try:
            processes.warm()  # its own, for the first command it forks
        except (OSError, processes.SandboxError):
            pass
        chan.sendall(json.dumps({"ready": str(path)}).encode())
        named(READY)  # after it said so: the server takes the next command to it
        _forks(chan, main, server, name)
    except BaseException:  # noqa: BLE001 - whatever happens, this process ends here
        pass
    finally:
        os._exit(0)


def _become(server: int) -> bytes:
    """A process of its own group (the server pauses or ends it with its forked copies), ended with the server,
    named in `ps`, and deaf to what the server's terminal-less session might send it. The server's name."""
    from circuits.sealed.walls import die_with_parent

    try:
        with open(f"/proc/{os.getpid()}/comm", "rb") as comm:
            name = comm.read().strip()
    except OSError:
        name = b"python"

    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    die_with_parent(server)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    named(PRIMING)
    return name


def _forks(chan: socket.socket, main, server: int, name: bytes) -> None:
    """Fork each command the server sends (a request, with the connection and the terminal's three descriptors)
    until the server closes its end; each fork takes the server's `name` back."""
    group = os.getpgid(server)
    children: set[int] = set()
    spent: set = set()
    chan.settimeout(1.0)  # a look at the ended forks each second
    while True:
        reap(children)
        reap(spent)
        try:
            data, fds, _, _ = socket.recv_fds(chan, 1 << 20, 4)
        except TimeoutError:
            continue
        except OSError:
            return
        if not data:  # the server retired this template, or ended
            return
        try:
            request = json.loads(data)
            if len(fds) != 4 or not isinstance(request, dict):
                raise ValueError
        except ValueError:
            for fd in fds:
                os.close(fd)
            chan.sendall(b"{}")
            continue
        conn = socket.socket(fileno=fds[0])
        conn.settimeout(ACCEPT_SECONDS)  # as the server's own fork has it (server._request)
        pid = fork_command(conn, request, fds[1:], main, spent, chan, name, group)  # (group: see fork_command)
        children.add(pid)
        conn.close()
        for fd in fds[1:]:
            os.close(fd)
        chan.sendall(json.dumps({"pid": pid}).encode())
