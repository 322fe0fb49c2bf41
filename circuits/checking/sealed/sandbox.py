"""A learner's code in a process of its own: resource limits, a file system fence, a deadline set from here.

What the process gets: a temporary folder holding only that submission's files (its working
directory, HOME and TMPDIR), stdin closed, an environment of a few fixed variables, `python -I`
(no PYTHON* variables, no user site), a private copy of the circuits package without the
reference solutions, and limits on CPU time, address space, file size and (when not root)
processes. On Linux with Landlock it can read only Python, the system libraries and that copy,
write only its folder, open no TCP connection and signal no process outside; a seccomp filter
refuses it new processes (threads still start); run as root, it gives up every capability. The grader gives
each puzzle file a deadline in the process's own time (its CPU time while it computes, the wall time while it
waits: checking.limits.Clock), so grading on every core at once slows a file but never stops it; a file that
runs over, exhausts a limit or ends the process is reported in one line and the process is started again for
the files after it.
When it is done, its whole process group is killed (forks included), and it dies with its parent however the
parent ends (Linux: a parent-death signal).

Two ways to start one: `run` starts `python -I` afresh per submission (grading), and `Zygote` keeps one
warm process (Python, numpy and circuits imported) that forks a fresh fenced child per job, so `circuits
check`, `watch`, `list` and the pytest plugin pay for a fork, not a start (see checking/sealed/answer.py).
The protocol is the parent's: each file may start once, in order, and has its own deadline, which nothing
the child sends can extend; what comes back is capped in size and decoded here (codec.py).
"""

from __future__ import annotations

import atexit
import hashlib
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
import time
from dataclasses import dataclass
from pathlib import Path

from circuits.checking import limits as checking_limits
from circuits.checking.library import cache_root

START_SECONDS = 60.0  # the process's own start (Python, numpy, sympy, circuits), before any file of the submission
POLL = 0.1  # seconds between two looks at the process's clock while it is quiet


@dataclass(frozen=True)
class Limits:
    seconds: float = 10.0  # the process's own time, per puzzle file (its import and, for the code puzzle, its calls)
    memory_mb: int = 2048  # address space of the submission's process
    file_mb: int = 16  # the largest file it may write (its printed output included)
    processes: int = 16  # forks and threads beyond what the user runs now (not enforceable for root)


_RUNTIME: list[str] = []
PACKAGE = Path(__file__).resolve().parents[2]  # the circuits package this process runs (checking/sealed/ is two below)


def runtime() -> str:
    """A private copy of the circuits package without the curriculum (the reference solutions): what a learner's
    process imports. Kept in the user's cache per version of the library's source, made once, never temporary."""
    if not _RUNTIME:
        package = PACKAGE
        sources = sorted(p for p in package.rglob("*.py") if "curriculum" not in p.relative_to(package).parts)
        h = hashlib.sha256()
        for f in sources:
            h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes())
        where = cache_root() / "runtime" / h.hexdigest()[:20]
        if not (where / "circuits" / "__init__.py").is_file():
            where.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".making-", dir=where.parent))
            try:
                for f in sources:
                    to = tmp / "circuits" / f.relative_to(package)
                    to.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(f, to)
                try:
                    os.rename(tmp, where)
                except OSError:  # another process made it first
                    pass
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            _prune(where.parent, keep=where)
        _RUNTIME.append(str(where))
    return _RUNTIME[0]


def _prune(folder: Path, keep: Path, days: float = 2.0) -> None:
    """Copies for library versions unused for `days` (a running process may still import from a recent one)."""
    cutoff = time.time() - days * 86400
    for old in folder.iterdir():
        try:
            if old != keep and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue


def _readable() -> list[str]:
    if not _READABLE:
        _READABLE.append(_readable_now())
    return _READABLE[0]


_READABLE: list[list[str]] = []


def _readable_now() -> list[str]:
    """What the submission's process may read: Python, its packages and the system libraries, the private
    circuits copy — and never the grader's own circuits package or the reference solutions, even where
    they lie inside one of those (an installed package keeps its curriculum inside site-packages)."""
    from circuits.checking import curriculum

    roots = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
        "/usr/lib",
        "/usr/lib64",
        "/lib",
        "/lib64",
    }
    hidden = [PACKAGE, curriculum.folder()]
    allowed = [p for r in sorted(roots) for p in readable_except(Path(r), [h.resolve() for h in hidden if h])]
    return sorted({str(p) for p in allowed} | {runtime()})


def readable_except(root: Path, hidden: list[Path]) -> list[Path]:
    """Paths covering everything under `root` but the folders `hidden`: root itself when none lies inside it,
    else its entries, split again only on the way to a hidden folder."""
    try:
        root = root.resolve()
        if not root.exists():
            return []
    except OSError:
        return []
    if any(root == h for h in hidden):
        return []
    if not any(root in h.parents for h in hidden):
        return [root]
    out: list[Path] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        out += readable_except(Path(entry.path), hidden)
    return out


def _tasks_of_this_user() -> int:
    uid, n = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    n += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                continue
    return n


_TASKS: list[tuple[float, int]] = []


def _tasks_now() -> int:
    """The user's tasks, counted again at most every 10 s (a scan of /proc per file would be on every check's
    path; a count much older could leave a child no room for the threads it may start)."""
    if not _TASKS or time.monotonic() - _TASKS[0][0] > 10:
        _TASKS[:] = [(time.monotonic(), _tasks_of_this_user())]
    return _TASKS[0][1]


def _limits(limits: Limits, n_files: int, serve: bool = False) -> dict:
    """The rlimits the child sets on itself before any learner's code runs (no preexec_fn: the parent has threads)."""
    nproc = _tasks_now() + limits.processes if os.getuid() != 0 and os.path.isdir("/proc") else None
    calls = checking_limits.seconds("check") if serve else 0.0
    return {
        "cpu": int(limits.seconds * n_files + calls + START_SECONDS),
        "as": limits.memory_mb << 20,
        "fsize": limits.file_mb << 20,
        "core": 0,
        "nproc": nproc,
    }


def _environment(folder: str) -> dict:
    kept = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}  # see env docs
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": folder,
        "TMPDIR": folder,
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        **kept,
    }


@dataclass
class Run:
    """What came back from a learner's process: per puzzle file its data or why none, and what it printed."""

    results: dict  # stem -> the child's message for that file, or {"error": why}
    printed: str = ""
    fence: str = ""
    starts: int = 0  # processes started (more than one: a file ran over a limit, and the rest ran in a new one)
    stopped: str = ""  # why a process ended outside any file


class SandboxError(Exception):
    """No learner's process could be started at all (not the learner's doing)."""


MAX_MESSAGE = 64 << 20  # the most one file's answer may send back (the largest reference answer is a few kB)


# --- one child process, started afresh or forked from the zygote ------------------------------------------
class _Child:
    """A learner's process seen from here: its pid, the pipe it answers on, and how to end it."""

    def __init__(self, pid: int, pipe, requests, ended, gone=lambda pid: False):
        self.pid, self.pipe, self.requests, self._ended, self._gone = pid, pipe, requests, ended, gone
        self.clock = checking_limits.Clock(checking_limits.process_cpu(pid))  # its own time: a busy machine
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


def _cold(job: dict, cwd: str, scratch: str, printed: int, serve: bool = False) -> _Child:
    """`python -I` afresh, in `cwd`, importing the private runtime copy."""
    read_fd, write_fd = os.pipe()
    req_r, req_w = os.pipe() if serve else (None, None)
    job = {**job, "fd": write_fd, "requests": req_r, "parent": os.getpid(), "scratch": scratch}
    job_fd = _unnamed_file("circuits-job-", json.dumps(job).encode("utf-8"))
    boot = (
        f"import sys; sys.path.insert(0, {runtime()!r}); "
        f"from circuits.checking.sealed.child import main; main({job_fd})"
    )
    passed = (write_fd, job_fd) + ((req_r,) if req_r is not None else ())
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", boot],
            cwd=cwd,
            env=_environment(scratch),
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
    return _Child(proc.pid, os.fdopen(read_fd, "rb", buffering=0), requests, ended)


class Zygote:
    """One warm process (Python, numpy, circuits imported, from the runtime copy) that forks a fenced child per
    job. Started in the background at once, so it warms up while this process does its own imports."""

    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.scratch = tempfile.mkdtemp(prefix="circuits-zygote-")
        boot = (
            f"import sys; sys.path.insert(0, {runtime()!r}); "
            "import numpy, sympy, circuits; "  # what every puzzle file imports, paid for once
            f"from circuits.checking.sealed.child import zygote; zygote({theirs.fileno()})"
        )
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", boot],
                cwd=self.scratch,
                env=_environment(self.scratch),
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
        if _ZYGOTE and _ZYGOTE[0].proc.poll() is not None:
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


def _forked(job: dict, cwd: str, scratch: str, printed: tuple[int, int], serve: bool) -> _Child:
    zygote = warm()
    read_fd, write_fd = os.pipe()
    req_r, req_w = os.pipe() if serve else (None, None)
    none = os.open(os.devnull, os.O_RDONLY)
    try:
        pid = zygote.spawn(
            {**job, "cwd": cwd, "env": _environment(scratch), "scratch": scratch},
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
    return _Child(pid, os.fdopen(read_fd, "rb", buffering=0), requests, zygote.ended, zygote.gone)


# --- the protocol: files start once, in order, each with a deadline of its own ---------------------------------
def _converse(child: _Child, items: list[dict], seconds: float, out: Run, stop_after: str | None = None) -> str | None:
    """Read `child`'s messages for `items` into `out.results`. Returns the stem it failed on (recorded), or None
    when it ran to the end (or to the file `stop_after`, after which it stays alive to be called)."""
    order = [i["stem"] for i in items]
    current, deadline = None, START_SECONDS
    while True:
        try:
            message = child.message(deadline)
        except TimeoutError:
            return _stopped(
                out,
                current,
                child,
                f"took longer than {seconds:g} s and was stopped"
                if current
                else f"did not start within {START_SECONDS:g} s",
            )
        except ValueError as e:
            return _stopped(out, current, child, str(e))
        if message is None:
            return _stopped(out, current, child, None)
        if "fence" in message:
            out.fence = str(message["fence"])
        elif "start" in message:
            expected = next((s for s in order if s not in out.results), None)
            if current is not None or message["start"] != expected:  # a second start, or out of order
                return _stopped(out, current or expected, child, "broke the protocol (it started a file twice)")
            current, deadline = expected, child.clock.tick() + seconds
        elif "done" in message and message["done"] == current and current is not None:
            out.results[current] = message
            if current == stop_after:
                return None
            current, deadline = None, child.clock.tick() + seconds
        elif message.get("end"):
            return None


def _stopped(out: Run, current: str | None, child: _Child, why: str | None) -> str | None:
    """Record why the file `current` got no answer, and end the child."""
    child.kill()
    if why is None:  # the process ended on its own: how?
        why = _ended(child.code())
    if current is None:
        out.stopped = why
        return None
    out.results[current] = {
        "error": f"the learner's process {why} while running this file"
        if not why.startswith("took")
        else f"running this file {why}"
    }
    return current


def _ended(code: int | None) -> str:
    if code is None:
        return "closed its pipe"
    if code < 0:
        sig = signal.Signals(-code)
        said = {
            signal.SIGXCPU: "used up its CPU time",
            signal.SIGKILL: "was killed (out of memory?)",
            signal.SIGSEGV: "crashed (segmentation fault)",
        }.get(sig, f"was ended by {sig.name}")
        return said
    return f"exited with code {code} (os._exit or exit in the file?)"


# --- grading: a submission's files in fresh processes ------------------------------------------------------
def run(folder: str, items: list[dict], limits: Limits = Limits()) -> Run:
    """Run the job `items` (one per puzzle file in `folder`) in fenced child processes; never raises for the files."""
    out = Run({})
    remaining = list(items)
    printed = _unnamed_file("circuits-printed-")  # the grader's, outside the folder: no link can replace it
    try:
        while remaining:
            out.starts += 1
            job = {"read": _readable(), "limits": _limits(limits, len(remaining)), "files": remaining}
            try:
                child = _cold(job, folder, folder, printed)
            except SandboxError as e:
                out.stopped = str(e)
                failed_at = None
            else:
                try:
                    failed_at = _converse(child, remaining, limits.seconds, out)
                finally:
                    child.kill()
            remaining = [i for i in remaining if i["stem"] not in out.results]
            if failed_at is None and remaining:  # it stopped between files, or before the first: the rest cannot run
                why = out.stopped or "stopped before this file"
                for item in remaining:
                    out.results[item["stem"]] = {"error": f"the submission's process {why} (before this file)"}
                break
        out.printed = _printed(printed)
    finally:
        os.close(printed)
    for message in out.results.values():
        if "error" in message:
            message["error"] = str(message["error"]).replace("the learner's process", "the submission's process")
    return out


def _printed(fd: int, n: int = 4000) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, n).decode("utf-8", errors="replace")


def _unnamed_file(prefix: str, data: bytes = b"") -> int:
    """A temporary file of the parent's, unlinked at once: only its descriptor reaches the child."""
    fd, path = tempfile.mkstemp(prefix=prefix)
    os.unlink(path)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


# --- checking: one learner's file in a child forked from the zygote -----------------------------------------
class Session:
    """One puzzle file's run: what it handed back, and (a code puzzle) its functions, still callable there."""

    def __init__(self, child: _Child | None, message: dict, printed: str, fence: str, seconds: float):
        self.child, self.message, self.printed, self.fence, self.seconds = child, message, printed, fence, seconds
        self.spent = 0.0

    def call(self, name: str, args) -> dict:
        """Ask the child to call its function `name` on `args` (data); its reply. A child that takes longer than
        its time for calls (all of them together, in its own seconds) is ended: TimeoutError."""
        if self.child is None:
            raise SandboxError("the learner's process has ended")
        try:
            self.child.requests.write(json.dumps({"call": name, "args": args}) + "\n")
            self.child.requests.flush()
            start = self.child.clock.tick()
            message = self.child.message(start + self.seconds - self.spent)
            self.spent += self.child.clock.tick() - start
        except TimeoutError:
            self.close()
            raise
        except (OSError, ValueError) as e:
            self.close()
            raise SandboxError(f"the learner's process stopped answering ({e})") from None
        if message is None:
            why = _ended(self.child.code())
            self.close()
            raise SandboxError(f"the learner's process {why}")
        return message.get("reply") if isinstance(message.get("reply"), dict) else {"unreadable": "no reply"}

    def close(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child = None

    def __del__(self):
        self.close()


def _terminal() -> tuple[int, int]:
    """This process's own stdout and stderr (as pytest's capture has them now): where a learner's prints go."""
    fds = []
    for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
        try:
            fds.append(stream.fileno())
        except (AttributeError, OSError, ValueError):  # closed, or an object without a descriptor
            fds.append(fd if _open(fd) else -1)
    return fds[0], fds[1]


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def load(item: dict, cwd: str, read: list[str], limits: Limits, serve: bool = False) -> Session:
    """Run one puzzle file (the job `item`) in a child forked from this process's zygote, reading `read` besides
    Python and the runtime, writing only a scratch folder of its own; its answer as data. What it prints goes to
    this process's stdout and stderr as it prints it. With `serve`, the child stays alive afterwards to call the
    file's functions (Session.call) until the session is closed."""
    scratch = tempfile.mkdtemp(prefix="circuits-scratch-")
    out_fd, err_fd = _terminal()
    quiet = os.open(os.devnull, os.O_WRONLY)
    printed = (out_fd if out_fd >= 0 else quiet, err_fd if err_fd >= 0 else quiet)
    out = Run({})
    child = None
    try:
        job = {"read": sorted({*_readable(), *read}), "limits": _limits(limits, 1, serve), "files": [item]}
        try:
            child = _forked(job, cwd, scratch, printed, serve)
        except SandboxError:  # no warm process to be had: a fresh one, slower but the same fence
            stop_warm()
            child = _cold(job, cwd, scratch, printed[1], serve)
        _converse(child, [item], limits.seconds, out, stop_after=item["stem"] if serve else None)
        message = out.results.get(item["stem"]) or {"error": f"the learner's process {out.stopped or 'stopped'}"}
        if not serve or "error" in message:
            child.kill()
            child = None
        return Session(child, message, "", out.fence, checking_limits.seconds("check"))
    except BaseException:
        if child is not None:
            child.kill()
        raise
    finally:
        os.close(quiet)
        shutil.rmtree(scratch, ignore_errors=True)
