"""The learner's process seen from the parent: started afresh (`python -I`) or forked from a warm zygote.

Each child is a Child: its pid, the pipe it answers on (read against its own clock), and how to kill it and its
whole process group. The zygote (one per parent process) keeps Python, numpy and circuits imported and forks a
fenced child per job (its fork loop is child.zygote).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading

from circuits.limits import clock
from circuits.sealed.provision import POLL, START_SECONDS, SandboxError, environment, runtime, unnamed_file

MAX_MESSAGE = 64 << 20  # the most one file's answer may send back (the largest reference answer is a few kB)


# --- one child process, started afresh or forked from the zygote ------------------------------------------
class Child:
    """A learner's process seen from here: its pid, the pipe it answers on, and how to end it."""

    def __init__(self, pid: int, pipe, requests, ended, gone=lambda pid: False):
        self.pid, self.pipe, self.requests, self._ended, self._gone = pid, pipe, requests, ended, gone
        self.clock = clock.Clock(clock.process_cpu(pid), clock.process_queued(pid))  # its own time: a busy machine
        self.buffer = b""  # slows it, never stops it

    def code(self) -> int | None:
        """How it ended (a Popen return code), waiting a little for it."""
        if not hasattr(self, "_code"):
            self._code = self._ended(self.pid)
        return self._code

    def kill(self) -> None:
        """The child and every process left in its group (forks): killed, then its pipes closed. (Not once it is
        known to have ended and been reaped: its pid may be another process's by then.)"""
        try:
            if not hasattr(self, "_code") and not self._gone(self.pid):
                os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for fd in (self.pipe, self.requests):
            try:
                if fd is not None:
                    fd.close()
            except OSError:
                pass
        self.code()

    def message(self, deadline: float) -> dict | None:
        """The next message it sends before its own clock reaches `deadline`; None: it closed the pipe.
        TimeoutError past the deadline; ValueError when it sends more than MAX_MESSAGE without a line's end."""
        parts, size = [self.buffer], len(self.buffer)
        while b"\n" not in parts[-1]:
            left = deadline - self.clock.tick()
            if left <= 0:
                self.buffer = b"".join(parts)
                raise TimeoutError
            if not select.select([self.pipe], [], [], min(left, POLL))[0]:
                continue
            chunk = self.pipe.read(1 << 20)
            if not chunk:
                return None
            parts.append(chunk)
            size += len(chunk)
            if size > MAX_MESSAGE:
                raise ValueError(f"handed back more than {MAX_MESSAGE >> 20} MB")
        line, _, self.buffer = b"".join(parts).partition(b"\n")
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return {}
        return message if isinstance(message, dict) else {}


def cold(job: dict, cwd: str, scratch: str, printed: int, serve: bool = False) -> Child:
    """`python -I` afresh, in `cwd`, importing the private runtime copy."""
    read_fd, write_fd = os.pipe()
    req_r, req_w = os.pipe() if serve else (None, None)
    job = {**job, "fd": write_fd, "requests": req_r, "parent": os.getpid(), "scratch": scratch}
    job_fd = unnamed_file("circuits-job-", json.dumps(job).encode("utf-8"))
    boot = f"import sys; sys.path.insert(0, {runtime()!r}); from circuits.sealed.child import main; main({job_fd})"
    passed = (write_fd, job_fd) + ((req_r,) if req_r is not None else ())
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", boot],
            cwd=cwd,
            env=environment(scratch),
            stdin=subprocess.DEVNULL,
            stdout=printed,
            stderr=subprocess.STDOUT,
            pass_fds=passed,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as e:
        os.close(read_fd)
        if req_w is not None:
            os.close(req_w)
        raise SandboxError(f"cannot start a process for the learner's code: {e}") from None
    finally:
        for fd in passed:
            os.close(fd)

    def ended(pid: int) -> int | None:
        try:
            return proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    requests = os.fdopen(req_w, "w", encoding="utf-8") if req_w is not None else None
    return Child(proc.pid, os.fdopen(read_fd, "rb", buffering=0), requests, ended)


class Zygote:
    """One warm process (Python, numpy, circuits imported, from the runtime copy) that forks a fenced child per
    job. Started in the background at once, so it warms up while this process does its own imports."""

    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.scratch = tempfile.mkdtemp(prefix="circuits-zygote-")
        boot = (
            f"import sys; sys.path.insert(0, {runtime()!r}); "
            "import numpy, sympy, circuits; "  # what every puzzle file imports, paid for once
            f"from circuits.sealed.child import zygote; zygote({theirs.fileno()})"
        )
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", boot],
                cwd=self.scratch,
                env=environment(self.scratch),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
                close_fds=True,
            )
        finally:
            theirs.close()
        self.sock, self.lock, self.ready = ours, threading.Lock(), False
        self.exits: dict[int, int] = {}
        self.adopted = False  # started by another process (the warm server, which forked this one): see adopt

    def running(self) -> bool:
        """Whether it is still there: its exit status where this process started it, else its socket still open."""
        if not self.adopted:
            return self.proc.poll() is None
        try:
            return self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            return True
        except OSError:
            return False

    def _receive(self, seconds: float) -> dict:
        if not select.select([self.sock], [], [], seconds)[0]:
            raise SandboxError(f"the warm process did not answer within {seconds:g} s")
        data = self.sock.recv(1 << 16)
        if not data:
            raise SandboxError("the warm process ended")
        message = json.loads(data)
        if "exit" in message:
            self.exits[int(message["exit"])] = int(message["code"])
        return message

    def spawn(self, job: dict, fds: list[int]) -> int:
        """Fork a child for `job` with the pipes `fds` (out, requests, printed); its pid."""
        with self.lock:
            while not self.ready:
                self.ready = bool(self._receive(START_SECONDS).get("ready"))
            socket.send_fds(self.sock, [json.dumps(job).encode("utf-8")], fds)
            while True:
                message = self._receive(START_SECONDS)
                if "pid" in message:
                    return int(message["pid"])

    def gone(self, pid: int) -> bool:
        """Whether `pid` is known to have ended (its exit read, without waiting)."""
        with self.lock:
            try:
                while pid not in self.exits and select.select([self.sock], [], [], 0)[0]:
                    self._receive(0)
            except (SandboxError, OSError, ValueError):
                return False
            return pid in self.exits

    def ended(self, pid: int) -> int | None:
        with self.lock:
            try:
                while pid not in self.exits:
                    self._receive(5.0)
            except (SandboxError, OSError, ValueError):
                return None
            return self.exits.pop(pid)

    def __del__(self):
        try:
            self.sock.close()
        except Exception:  # noqa: BLE001 - at interpreter shutdown
            pass

    def close(self) -> None:
        try:
            self.sock.close()  # the zygote ends, and kills what it forked
        finally:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.scratch, ignore_errors=True)


_ZYGOTE: list[Zygote] = []
_ZYGOTE_LOCK = threading.Lock()
_EXIT_HOOKED: list[bool] = []


def warm() -> Zygote:
    """This process's zygote, started on first use (and again if it has ended)."""
    with _ZYGOTE_LOCK:
        if _ZYGOTE and not _ZYGOTE[0].running():
            _ZYGOTE.pop().close()
        if not _ZYGOTE:
            _ZYGOTE.append(Zygote())
            if not _EXIT_HOOKED:
                atexit.register(stop_warm)
                _EXIT_HOOKED.append(True)
        return _ZYGOTE[0]


def stop_warm() -> None:
    """End this process's zygote, if there is one (it also ends by itself when this process ends)."""
    with _ZYGOTE_LOCK:
        if _ZYGOTE:
            _ZYGOTE.pop().close()


def hand_over() -> int | None:
    """In the warm server (cli/server.py), just after it forked a command: the warm process is the fork's now (see
    adopt), so this process closes its end without ending it and starts another for the next fork. The pid handed
    over, for the server to reap once it ends."""
    with _ZYGOTE_LOCK:
        given = _ZYGOTE.pop() if _ZYGOTE else None
    if given is not None:
        given.sock.close()
    try:
        warm()
    except (OSError, SandboxError):  # the next fork starts its own, as any command does
        pass
    return given.proc.pid if given is not None else None


def adopt() -> None:
    """In the server's fork: the warm process it inherited is this process's alone, though another started it."""
    with _ZYGOTE_LOCK:
        for zygote in _ZYGOTE:
            zygote.adopted = True


def forsake() -> None:
    """In the server's fork for a command that runs no learner's file: the server keeps its warm process, so this
    process closes its copy of the socket (without ending it) and forgets it."""
    with _ZYGOTE_LOCK:
        while _ZYGOTE:
            _ZYGOTE.pop().sock.close()


def forked(job: dict, cwd: str, scratch: str, printed: tuple[int, int], serve: bool) -> Child:
    zygote = warm()
    read_fd, write_fd = os.pipe()
    req_r, req_w = os.pipe() if serve else (None, None)
    none = os.open(os.devnull, os.O_RDONLY)
    try:
        pid = zygote.spawn(
            {**job, "cwd": cwd, "env": environment(scratch), "scratch": scratch},
            [write_fd, req_r if req_r is not None else none, *printed],
        )
    except (SandboxError, OSError, ValueError) as e:
        os.close(read_fd)
        if req_w is not None:
            os.close(req_w)
        raise SandboxError(str(e)) from None
    finally:
        os.close(write_fd)
        os.close(none)
        if req_r is not None:
            os.close(req_r)
    requests = os.fdopen(req_w, "w", encoding="utf-8") if req_w is not None else None
    return Child(pid, os.fdopen(read_fd, "rb", buffering=0), requests, zygote.ended, zygote.gone)
