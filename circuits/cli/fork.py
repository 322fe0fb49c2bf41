"""The warm server's fork: one command run as the `circuits` command would run it, in the command's folder,
environment and terminal (server.py accepts it; this module becomes it)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading

from circuits.cli.wire import line


def warm_up() -> None:
    """What a check imports and computes once per process, done before the first command (what a fork still
    imported, by `python -X importtime`, is listed here too)."""
    import numpy.ma  # noqa: F401
    import numpy.random  # noqa: F401

    import circuits.checking.build  # noqa: F401
    import circuits.checking.certified  # noqa: F401
    import circuits.checking.checker  # noqa: F401
    import circuits.checking.drawn  # noqa: F401
    import circuits.checking.strategies  # noqa: F401 - hypothesis
    import circuits.display.report  # noqa: F401 - rich
    import circuits.display.watch  # noqa: F401
    import circuits.sealed.sandbox  # noqa: F401
    from circuits.checking.library import library_version
    from circuits.model.threads import one_blas_thread
    from circuits.sealed import sandbox

    library_version()
    with one_blas_thread():  # threadpoolctl's look at the loaded libraries, kept (functools.cache)
        pass
    try:
        sandbox.warm()  # the first fork's warm process for learners' files (each fork takes one: processes.hand_over)
    except (OSError, sandbox.SandboxError):
        pass


def child(conn: socket.socket, request: dict, fds: list[int], main) -> None:
    """The fork that runs one command: never returns."""
    try:
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        if line(conn) is None:  # the client gave up before `go`: it runs the command itself
            os._exit(0)
        _take(request, fds)
        from circuits import limits

        watch = threading.Thread(target=_watch_client, args=(conn,), daemon=True)
        setattr(watch, limits.QUIET, True)  # blocked in recv, holding nothing a check's forked copy could need
        watch.start()
        code = _run(main, request["argv"])
        conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
    except BaseException:  # noqa: BLE001 - a fork never returns into the server's loop
        pass
    os._exit(0)


def _take(request: dict, fds: list[int]) -> None:
    """Become the command: its working directory, environment, and terminal."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in request["env"].items()})
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    encoding, errors = sys.__stdout__.encoding, sys.__stdout__.errors  # the server's: the same locale settings
    sys.stdin = sys.__stdin__ = _stream(0, "r", encoding, "strict")
    sys.stdout = sys.__stdout__ = _stream(1, "w", encoding, errors)
    sys.stderr = sys.__stderr__ = _stream(2, "w", encoding, "backslashreplace", line=True)


def _stream(fd: int, mode: str, encoding: str, errors: str, line: bool = False):
    """The text stream Python would have made for `fd` at start: line-buffered on a terminal (stderr always)."""
    return open(fd, mode, buffering=1 if line or os.isatty(fd) else -1, encoding=encoding, errors=errors, closefd=False)


def _watch_client(conn: socket.socket) -> None:
    """Ctrl-C at the client interrupts the command; the client gone (killed) ends it at once."""
    conn.settimeout(None)
    while True:
        try:
            chunk = conn.recv(64)
        except OSError:
            chunk = b""
        if not chunk:  # its warm process and learner's children end with it (their socket closes, or PDEATHSIG)
            os._exit(1)
        if b"int" in chunk:
            os.kill(os.getpid(), signal.SIGINT)


def _run(main, argv: list[str]) -> int:
    from circuits.sealed.processes import stop_warm

    try:
        code = main(argv, served=True)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    finally:
        stop_warm()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    return code


def fork_command(
    conn: socket.socket,
    request: dict,
    fds: list[int],
    main,
    spent: set,
    listener=None,
    name: bytes | None = None,
    group: int | None = None,
) -> int:
    """Fork the command of `request` (its connection, its terminal's descriptors `fds`): the fork becomes it
    (child) and takes this process's warm process for learners' files if it may run one; this process starts
    another (the one handed over goes into `spent`, to be reaped). In the fork: `listener` is closed, `name` is
    its name in `ps` and `group` its process group (a primed template's fork takes back the server's, so that
    pausing a template never pauses a command). Its pid."""
    from circuits.sealed import processes

    learners = runs_learners(request["argv"])
    pid = os.fork()
    if pid == 0:
        if group is not None:
            try:
                os.setpgid(0, group)
            except OSError:
                pass
        processes.adopt() if learners else processes.forsake()
        if listener is not None:
            listener.close()
        if name is not None:
            named(name)
        child(conn, request, fds, main)
    if learners:  # the fork took the warm process: another for the next command
        spent.add(processes.hand_over())
        spent.discard(None)
    return pid


def named(name: bytes) -> None:
    """This process's name in `ps` (/proc/PID/comm, 15 bytes at most), where Linux lets it be set."""
    try:
        with open(f"/proc/{os.getpid()}/comm", "wb") as comm:
            comm.write(name[:15])
    except OSError:
        pass


def runs_learners(argv: list) -> bool:
    """Whether a command may run a learner's file (and so wants the warm process): all but the references'."""
    return not any(a in ("--solution", "--solutions") for a in argv)


def reap(children: set[int]) -> None:
    """Reap those of `children` (this process's) that have ended, and forget them."""
    for pid in list(children):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            children.discard(pid)
