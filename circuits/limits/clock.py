"""A worker's own seconds, as the time limits count them: the CPU time it gets while it computes, the wall time
while it waits (limits/__init__.py runs code on workers against them; sealed/processes.py times a learner's
process with them)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

IDLE = 0.05  # a worker that used less than this share of the wall time since the last look is waiting, not computing


class Clock:
    """A worker's own seconds, as the limits count them: while it computes, the CPU time it gets (on a machine busy
    with other work that is a fraction of the wall time, and the limit waits for it); while it waits (a sleep, a
    blocked read: under IDLE of the wall time), the wall time, so code waiting for input is stopped all the same.
    `cpu()` reads the worker's CPU seconds (a thread's, a process's), None where the platform cannot: then the wall
    time counts."""

    def __init__(self, cpu: Callable[[], float | None], queued: Callable[[], float | None] = lambda: None):
        self.read, self.read_queued, self.seconds = cpu, queued, 0.0
        self.wall, self.cpu, self.queued = time.monotonic(), cpu(), queued()

    def tick(self) -> float:
        """Add the time since the last tick, and return the worker's seconds so far. Time the worker spent ready to
        run but held back by the scheduler (`queued`, where the platform says it) is neither waiting nor its own: a
        worker that got little CPU because other processes had the cores is charged that CPU, however small."""
        wall, cpu, queued = time.monotonic(), self.read(), self.read_queued()
        elapsed = wall - self.wall
        used = None if cpu is None or self.cpu is None else cpu - self.cpu
        held = 0.0 if queued is None or self.queued is None else min(max(queued - self.queued, 0.0), elapsed)
        waiting = used is None or used < IDLE * (elapsed - held)
        self.seconds += elapsed if waiting else min(used, elapsed)
        self.wall, self.cpu, self.queued = wall, cpu, queued
        return self.seconds


def thread_cpu(ident: int) -> Callable[[], float | None]:
    """A reader of thread `ident`'s CPU seconds (None where there is no per-thread CPU clock: macOS, Windows)."""
    try:
        clock = time.pthread_getcpuclockid(ident)
    except (AttributeError, OSError):
        return lambda: None

    def read() -> float | None:
        try:
            return time.clock_gettime(clock)
        except OSError:  # the thread has ended
            return None

    return read


def thread_queued(native_id: int | None) -> Callable[[], float | None]:
    """A reader of the seconds thread `native_id` of this process has spent ready to run but waiting for a core
    (Linux's schedstat); None where the platform does not say (then a starved worker may be charged wall time)."""
    return _queued(f"/proc/self/task/{native_id}/schedstat")


def process_queued(pid: int) -> Callable[[], float | None]:
    """thread_queued for process `pid` (its main thread: a learner's process computes there)."""
    return _queued(f"/proc/{pid}/schedstat")


def _queued(path: str) -> Callable[[], float | None]:

    def read() -> float | None:
        try:
            with open(path, "rb") as f:
                return int(f.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return None

    return read


def process_cpu(pid: int) -> Callable[[], float | None]:
    """A reader of process `pid`'s CPU seconds, user and system, from /proc (None where there is no /proc)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def read() -> float | None:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick  # utime, stime: fields 14 and 15 of proc(5)
        except (OSError, IndexError, ValueError):
            return None

    return read
