"""A learner's code in a process of its own: resource limits, a file system fence, a deadline set from here.

What the process gets: a temporary folder holding only that submission's files (its working
directory, HOME and TMPDIR), stdin closed, an environment of a few fixed variables, `python -I`
(no PYTHON* variables, no user site), a private copy of the circuits package without the
reference solutions, and limits on CPU time, address space, file size and (when not root)
processes. On Linux with Landlock it can read only Python, the system libraries and that copy,
write only its folder, open no TCP connection and signal no process outside; a seccomp filter
refuses it new processes (threads still start); run as root, it gives up every capability. The grader gives
each puzzle file a deadline in the process's own time (its CPU time while it computes, the wall time while it
waits: limits.clock.Clock), so grading on every core at once slows a file but never stops it; a file that
runs over, exhausts a limit or ends the process is reported in one line and the process is started again for
the files after it.
When it is done, its whole process group is killed (forks included), and it dies with its parent however the
parent ends (Linux: a parent-death signal).

Two ways to start one: `run` starts `python -I` afresh per submission (grading), and `Zygote` keeps one
warm process (Python, numpy and circuits imported) that forks a fresh fenced child per job, so `circuits
check`, `watch`, `list` and the pytest plugin pay for a fork, not a start (see sealed/answer.py).
The protocol is the parent's: each file may start once, in order, and has its own deadline, which nothing
the child sends can extend; what comes back is capped in size and decoded here (codec.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass

from circuits import limits as checking_limits
from circuits.sealed.processes import Child, Zygote, cold, forked, stop_warm, warm  # noqa: F401 - re-exported
from circuits.sealed.provision import (  # noqa: F401 - re-exported: sandbox is where callers look
    START_SECONDS,
    Limits,
    SandboxError,
    readable,
    readable_except,
    rlimits,
    runtime,
    unnamed_file,
)


@dataclass
class Run:
    """What came back from a learner's process: per puzzle file its data or why none, and what it printed."""

    results: dict  # stem -> the child's message for that file, or {"error": why}
    printed: str = ""
    fence: str = ""
    starts: int = 0  # processes started (more than one: a file ran over a limit, and the rest ran in a new one)
    stopped: str = ""  # why a process ended outside any file


# --- the protocol: files start once, in order, each with a deadline of its own ---------------------------------
def _converse(child: Child, items: list[dict], seconds: float, out: Run, stop_after: str | None = None) -> str | None:
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


def _stopped(out: Run, current: str | None, child: Child, why: str | None) -> str | None:
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
    printed = unnamed_file("circuits-printed-")  # the grader's, outside the folder: no link can replace it
    try:
        while remaining:
            out.starts += 1
            job = {"read": readable(), "limits": rlimits(limits, len(remaining)), "files": remaining}
            try:
                child = cold(job, folder, folder, printed)
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


# --- checking: one learner's file in a child forked from the zygote -----------------------------------------
class Session:
    """One puzzle file's run: what it handed back, and (a code puzzle) its functions, still callable there."""

    def __init__(self, child: Child | None, message: dict, printed: str, fence: str, seconds: float):
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
        job = {"read": sorted({*readable(), *read}), "limits": rlimits(limits, 1, serve), "files": [item]}
        try:
            child = forked(job, cwd, scratch, printed, serve)
        except SandboxError:  # no warm process to be had: a fresh one, slower but the same fence
            stop_warm()
            child = cold(job, cwd, scratch, printed[1], serve)
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
