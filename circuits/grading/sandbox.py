"""One submission's code in a process of its own: a fresh folder, resource limits, a file system fence, a deadline.

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
When it is done, its whole process group is killed (forks included).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from circuits.checking import limits as checking_limits

START_SECONDS = 60.0  # the process's own start (Python, numpy, sympy, circuits), before any file of the submission
POLL = 0.1  # seconds between two looks at the process's clock while it is quiet


@dataclass(frozen=True)
class Limits:
    seconds: float = 10.0  # the process's own time, per puzzle file (its import and, for the code puzzle, its calls)
    memory_mb: int = 2048  # address space of the submission's process
    file_mb: int = 16  # the largest file it may write (its printed output included)
    processes: int = 16  # forks and threads beyond what the user runs now (not enforceable for root)


_RUNTIME: list[str] = []


def runtime() -> str:
    """A private copy of the circuits package, without the curriculum: what submissions import. Made once per process."""
    if not _RUNTIME:
        import circuits

        where = tempfile.mkdtemp(prefix="circuits-runtime-")
        atexit.register(shutil.rmtree, where, ignore_errors=True)
        shutil.copytree(Path(circuits.__file__).parent, Path(where) / "circuits",
                        ignore=shutil.ignore_patterns("__pycache__", "curriculum", "solutions", "*.pyc"))
        _RUNTIME.append(where)
    return _RUNTIME[0]


def _readable() -> list[str]:
    """What the submission's process may read: Python, its packages and the system libraries, the private
    circuits copy — and never the grader's own circuits package or the reference solutions, even where
    they lie inside one of those (an installed package keeps its curriculum inside site-packages)."""
    import circuits
    from circuits.checking import curriculum

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
             "/usr/lib", "/usr/lib64", "/lib", "/lib64"}
    hidden = [Path(circuits.__file__).resolve().parent, curriculum.folder()]
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


def _limits(limits: Limits, n_files: int) -> dict:
    """The rlimits the child sets on itself before any submission code runs (no preexec_fn: the grader has threads)."""
    nproc = _tasks_of_this_user() + limits.processes if os.getuid() != 0 and os.path.isdir("/proc") else None
    return {"cpu": int(limits.seconds * n_files + START_SECONDS), "as": limits.memory_mb << 20,
            "fsize": limits.file_mb << 20, "core": 0, "nproc": nproc}


def _environment(folder: str) -> dict:
    return {"PATH": "/usr/bin:/bin", "HOME": folder, "TMPDIR": folder, "LANG": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


@dataclass
class Run:
    """What came back from a submission's process: per puzzle file its data or why none, and what it printed."""

    results: dict  # stem -> the child's message for that file, or {"error": why}
    printed: str = ""
    fence: str = ""
    starts: int = 0  # processes started (more than one: a file ran over a limit, and the rest ran in a new one)
    stopped: str = ""  # why a process ended outside any file


def run(folder: str, items: list[dict], limits: Limits = Limits()) -> Run:
    """Run the job `items` (one per puzzle file in `folder`) in fenced child processes; never raises for the files."""
    out = Run({})
    remaining = list(items)
    printed = _unnamed_file("circuits-printed-")  # the grader's, outside the folder: no link can replace it
    try:
        while remaining:
            out.starts += 1
            failed_at = _one_process(folder, remaining, limits, out, printed)
            remaining = [i for i in remaining if i["stem"] not in out.results]
            if failed_at is None and remaining:  # it stopped between files, or before the first: the rest cannot run
                why = out.stopped or "stopped before this file"
                for item in remaining:
                    out.results[item["stem"]] = {"error": f"the submission's process {why} (before this file)"}
                break
        os.lseek(printed, 0, os.SEEK_SET)
        out.printed = os.read(printed, 4000).decode("utf-8", errors="replace")
    finally:
        os.close(printed)
    return out


def _unnamed_file(prefix: str, data: bytes = b"") -> int:
    """A temporary file of the grader's, unlinked at once: only its descriptor reaches the child."""
    fd, path = tempfile.mkstemp(prefix=prefix)
    os.unlink(path)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _one_process(folder: str, items: list[dict], limits: Limits, out: Run, printed: int) -> str | None:
    """One child over `items`; returns the stem it failed on (recorded in out.results), or None if it ran to the end."""
    read_fd, write_fd = os.pipe()
    job = {"fd": write_fd, "read": _readable(), "limits": _limits(limits, len(items)), "files": items}
    job_fd = _unnamed_file("circuits-job-", json.dumps(job).encode("utf-8"))
    boot = (f"import sys; sys.path.insert(0, {runtime()!r}); "
            f"from circuits.grading.child import main; main({job_fd})")
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-B", "-c", boot], cwd=folder, env=_environment(folder),
                                stdin=subprocess.DEVNULL, stdout=printed, stderr=subprocess.STDOUT,
                                pass_fds=(write_fd, job_fd), start_new_session=True, close_fds=True)
    finally:
        os.close(job_fd)
    os.close(write_fd)
    clock = checking_limits.Clock(checking_limits.process_cpu(proc.pid))  # the child's own time: a busy machine
    current, deadline, buffer = None, START_SECONDS, b""  # (a class graded on every core) slows it, never stops it
    try:
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            while True:
                left = deadline - clock.tick()
                ready = select.select([pipe], [], [], min(left, POLL))[0] if left > 0 else []
                if not ready and left > 0:
                    continue
                if not ready:
                    return _stopped(out, current, proc, f"took longer than {limits.seconds:g} s and was stopped"
                                    if current else f"did not start within {START_SECONDS:g} s")
                chunk = pipe.read(1 << 16)
                if not chunk:
                    return _stopped(out, current, proc, None)
                buffer += chunk
                if len(buffer) > 256 << 20:
                    return _stopped(out, current, proc, "handed back more than 256 MB")
                if b"\n" not in chunk:  # a long line still arriving: split once it ends
                    continue
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    try:
                        message = json.loads(line)
                    except (ValueError, UnicodeDecodeError):
                        message = {}
                    if not isinstance(message, dict):
                        message = {}
                    if "fence" in message:
                        out.fence = str(message["fence"])
                    elif "start" in message:
                        current, deadline = str(message["start"]), clock.tick() + limits.seconds
                    elif "done" in message and message["done"] == current:
                        out.results[current] = message
                        current, deadline = None, clock.tick() + limits.seconds
                    elif message.get("end"):
                        return None
    finally:
        _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    """The child and every process left in its group (forks): killed, and the child reaped."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _stopped(out: Run, current: str | None, proc: subprocess.Popen, why: str | None) -> str | None:
    """Record why the file `current` got no answer; the process is killed by the caller."""
    if why is None:  # the process ended on its own: how?
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        why = _ended(code)
    if current is None:
        out.stopped = why
        return None
    out.results[current] = {"error": f"the submission's process {why} while running this file"
                            if not why.startswith("took") else f"running this file {why}"}
    return current


def _ended(code: int | None) -> str:
    if code is None:
        return "closed its pipe to the grader"
    if code < 0:
        sig = signal.Signals(-code)
        said = {signal.SIGXCPU: "used up its CPU time", signal.SIGKILL: "was killed (out of memory?)",
                signal.SIGSEGV: "crashed (segmentation fault)"}.get(sig, f"was ended by {sig.name}")
        return said
    return f"exited with code {code} (os._exit or exit in the file?)"
