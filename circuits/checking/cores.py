"""Work shared across the cores: a check's batches on threads, an audit's mutants in forked copies of this process.

Each item's result is a function of the item alone (the checks are deterministic, and the caches only save work),
so a helper thread, or a copy of this process, does its items exactly as this thread would: the same code on the
same arrays, so the same bits. A batch's parts go to threads (`threaded`): numpy's products and ufuncs let go of the
GIL, and a thread costs nothing to start. An audit's mutants, mostly Python, go to forked copies (`forked`), which hand
back data (pickled results); a copy that dies, raises, or says nothing readable costs only time: what it took is
done here afterwards, in order. Either way the first item in order that raises raises here, as on one thread, and
the caller waits in Python, so a time limit stops the wait (and the copies with it). A copy never forks again.

Only the checker's own code runs on a helper (`sharing` is opened by the checker for the reference's targets on an
answer's data; an author's puzzle with no reference yet runs on one thread).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import pickle
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from circuits import limits

T = TypeVar("T")
R = TypeVar("R")

ENV = "CIRCUITS_WORKERS"  # the threads a check, or the processes an audit, may use (default: the cores)
_IN_COPY = [False]  # this process is a copy: it does its items itself
_WORKERS: contextvars.ContextVar[int] = contextvars.ContextVar("circuits_workers", default=0)  # 0: none chosen
FORKS = [0]  # copies this process has made (tests read it)
THREADED = [0]  # batches shared with helper threads (tests read it)


class Raised:
    """What a copy hands back for an item that raised: it is done again here, in order, and raises here."""


def _raised(result) -> bool:
    return isinstance(result, Raised)


def available() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def count() -> int:
    """The threads a check (or processes an audit) may use: $CIRCUITS_WORKERS if set, else `available()`."""
    raw = os.environ.get(ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return available()


@contextlib.contextmanager
def sharing(n: int):
    """Inside the block, `workers()` is `n`, or fewer where an outer block chose fewer (grading, which runs a
    submission per core, chooses 1); in this thread and the limits workers it starts."""
    outer = _WORKERS.get()
    token = _WORKERS.set(max(1, n) if outer == 0 else min(outer, max(1, n)))
    try:
        yield
    finally:
        _WORKERS.reset(token)


def workers() -> int:
    """The threads a batch may be shared across here: 1 unless a `sharing` block says more."""
    return _WORKERS.get() or 1


def can_fork() -> bool:
    """Whether a copy of this process may be forked safely: Linux, not in a copy, and no other thread that
    could hold a lock the copy would wait on forever: besides this one, only threads marked limits.QUIET (one
    waiting for its limits worker, the served command's watch on its client, blocked in a read)."""
    if _IN_COPY[0] or not sys.platform.startswith("linux"):  # macOS: a fork after Accelerate's BLAS may crash
        return False
    me = threading.current_thread()
    return all(t is me or getattr(t, limits.QUIET, False) for t in threading.enumerate())


def forked(fn: Callable[[T], R], items: Sequence[T], n: int = 1, until: float | None = None) -> list[R | None]:
    """`fn(item)` for every item, in order, on `n` processes (this one and forked copies, each taking the next item
    not yet taken, so a slow item holds up one process only); None for an item left undone because
    time.perf_counter() passed `until` (items are taken in order, so those are the last ones). An item that raises
    raises here, as on one process: the first in order."""
    n = min(n, len(items))
    taken = _counter() if n > 1 and can_fork() else None
    if taken is None:
        got = _share(fn, items, iter(range(len(items))), until, keep=False)
        return [got.get(i) for i in range(len(items))]
    children = [c for c in (_fork(fn, items, taken, until) for _ in range(1, n)) if c is not None]
    got: dict[int, object] = {}
    try:
        got.update(_share(fn, items, _next(taken, len(items)), until, keep=True))
        for pid, fd in children:
            got.update(_collect(pid, fd) or {})  # a copy that died: what it took is done below
        out = []
        for i in range(min(taken.value, len(items))):
            if i not in got or _raised(got[i]):  # never done, or raised: done here, in order (raising here)
                got.update(_share(fn, items, iter([i]), until, keep=False))
            out.append(got.get(i))
    finally:
        for pid, fd in children:
            _reap(pid, fd)
    return out + [None] * (len(items) - len(out))


def threaded(fn: Callable[[T], R], items: Sequence[T], n: int = 1, setup: Callable[[], None] = lambda: None) -> list[R]:
    """`fn(item)` for every item, in order, on `n` threads (this one and helpers, each taking the next item not yet
    taken; a helper runs `setup()` first, in a copy of this thread's context): numpy's products and ufuncs let go
    of the GIL, so the parts of one batch run side by side, each the same code on the same arrays as on one
    thread, without a copy of the process. The first item in order that raised raises here, as on one thread."""
    n = min(n, len(items))
    if n <= 1:
        return [fn(x) for x in items]
    lock, order, got, stop = threading.Lock(), iter(range(len(items))), {}, threading.Event()

    def take() -> int | None:
        with lock:
            return None if stop.is_set() else next(order, None)

    def share() -> None:
        while (i := take()) is not None:
            try:
                got[i] = (True, fn(items[i]))
            except Exception as e:  # noqa: BLE001 - raised below, in order
                got[i] = (False, e)

    def helper() -> None:
        try:
            setup()
            share()
        finally:
            limits.forget_this_thread()

    contexts = [contextvars.copy_context() for _ in range(1, n)]
    helpers = [threading.Thread(target=c.run, args=(helper,), daemon=True) for c in contexts]
    THREADED[0] += 1
    for h in helpers:
        h.start()
    try:
        share()
        for h in helpers:
            while h.is_alive():  # a time limit raised in this thread is taken between two looks
                h.join(POLL)
    finally:  # stopped (a time limit, Ctrl-C): the helpers take no further item
        stop.set()
    out = []
    for i, x in enumerate(items):
        ok, value = got[i] if i in got else (True, fn(x))  # a helper that died: its item done here
        if not ok:
            raise value
        out.append(value)
    return out


def _counter():
    """The index of the next item to take, shared by this process and its copies; None where shared memory cannot
    be had (the items are then done here, one by one)."""
    try:
        from multiprocessing import get_context

        return get_context("fork").Value("q", 0)
    except (ImportError, OSError, ValueError):
        return None


def _next(taken, n: int) -> Iterator[int]:
    while True:
        with taken.get_lock():
            i = taken.value
            if i >= n:
                return
            taken.value = i + 1
        yield i


def _share(fn, items, indices: Iterator[int], until: float | None, keep: bool) -> dict:
    """`fn` on the items at `indices` until `until`; with `keep`, an item that raises (an Exception) is a Raised
    rather than raising, to be done again in order."""
    out = {}
    while until is None or time.perf_counter() <= until:  # looked at before an item is taken: none is left half done
        i = next(indices, None)
        if i is None:
            break
        if not keep:
            out[i] = fn(items[i])
            continue
        try:
            out[i] = fn(items[i])
        except Exception:  # noqa: BLE001 - done again in order by the caller, where it raises
            out[i] = Raised()
    return out


def _fork(fn, items, taken, until: float | None) -> tuple[int, int] | None:
    """A copy of this process doing the items it takes, its pickled results written to a pipe; (its pid, the
    pipe's read end), or None where no copy can be made."""
    parent = os.getpid()
    try:
        r, w = os.pipe()
    except OSError:  # out of file descriptors: no copy, this process does the items
        return None
    try:
        with warnings.catch_warnings():  # Python 3.12's and JAX's notes on forking with threads: the copy runs
            warnings.simplefilter("ignore", DeprecationWarning)  # numpy only, and can_fork allowed only waiters
            warnings.filterwarnings("ignore", r"os\.fork\(\) was called", RuntimeWarning)
            pid = os.fork()
    except OSError:  # a process limit, or no memory for one: no copy, this process does the items
        os.close(r)
        os.close(w)
        return None
    FORKS[0] += 1
    if pid == 0:  # the copy: never returns into the caller's code
        code = 1
        try:
            from circuits.sealed.walls import die_with_parent

            _IN_COPY[0] = True
            die_with_parent(parent)  # however the caller ends (a time limit, Ctrl-C, a kill), the copy ends with it
            os.close(r)
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the copy at once, as it ends the command
            data = pickle.dumps(_share(fn, items, _next(taken, len(items)), until, keep=True))
            with os.fdopen(w, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            limits.REAL_EXIT(code)
    os.close(w)
    return pid, r


POLL = 0.05  # seconds between two looks at a copy: a time limit raised in this thread is taken between them


def _collect(pid: int, fd: int) -> dict | None:
    """What the copy `pid` wrote to `fd`, once it has ended; None unless it ended well and it reads."""
    chunks = []
    while True:
        if not select.select([fd], [], [], POLL)[0]:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    try:
        got = pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - an unreadable share is done again here
        return None
    return got if isinstance(got, dict) else None


def _reap(pid: int, fd: int) -> None:
    """The copy ended (killed if still running: this process is leaving early) and its pipe closed."""
    try:
        os.close(fd)
    except OSError:
        pass
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except ChildProcessError:  # already reaped by _collect
        pass
