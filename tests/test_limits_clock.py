"""The time limits count a worker's own time: its CPU time while it computes, the wall time while it waits. A check
on a machine busy with other work (load average 8 on two cores) is slowed, never stopped; a file that hangs in a
loop or waits for input is stopped all the same."""

import threading
import time

import pytest

from circuits import limits
from circuits.errors import CircuitError
from circuits.limits import clock as clocks


class FakeTime:
    """time.monotonic and the thread's CPU clock, moved by hand."""

    def __init__(self):
        self.wall, self.cpu = 100.0, 5.0

    def monotonic(self):
        return self.wall

    def pthread_getcpuclockid(self, ident):
        return 7

    def clock_gettime(self, clock):
        assert clock == 7
        return self.cpu


@pytest.fixture
def fake(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(clocks, "time", fake)
    return fake


def test_a_starved_worker_is_charged_the_cpu_it_got_not_the_wall_time(fake):
    clock = clocks.Clock(clocks.thread_cpu(threading.get_ident()))
    fake.wall, fake.cpu = fake.wall + 4.0, fake.cpu + 1.0  # a quarter of a core: another process has the rest
    assert clock.tick() == pytest.approx(1.0)
    fake.wall, fake.cpu = fake.wall + 2.0, fake.cpu + 2.0  # the machine is quiet again
    assert clock.tick() == pytest.approx(3.0)


def test_a_worker_held_back_by_the_scheduler_is_charged_its_cpu_however_small_a_share(fake):
    """At load 16 on two cores a computing worker can get under 5 % of a core for a while: the time it spent ready
    to run but waiting for a core (Linux's schedstat) is not waiting for input, so only its CPU is charged (a
    reference check of puzzle 28 was stopped by the 10 s target limit so, its wall time charged)."""
    queued = [1.0]
    clock = clocks.Clock(clocks.thread_cpu(threading.get_ident()), lambda: queued[0])
    fake.wall, fake.cpu, queued[0] = fake.wall + 4.0, fake.cpu + 0.1, queued[0] + 3.8  # 2.5 % of a core
    assert clock.tick() == pytest.approx(0.1)
    fake.wall, fake.cpu, queued[0] = fake.wall + 4.0, fake.cpu + 0.01, queued[0] + 0.0  # asleep: not queued
    assert clock.tick() == pytest.approx(4.1)


def test_the_schedulers_queue_is_read_for_a_real_thread():
    read = clocks.thread_queued(threading.get_native_id())
    if read() is None:
        pytest.skip("no schedstat on this platform: a starved worker may be charged wall time")
    before = read()
    _busy(0.05)
    assert read() >= before >= 0
    assert clocks.thread_queued(2**22 + 7)() is None  # no such thread: nothing to read


def test_a_waiting_worker_is_charged_the_wall_time(fake):
    clock = clocks.Clock(clocks.thread_cpu(threading.get_ident()))
    fake.wall, fake.cpu = fake.wall + 4.0, fake.cpu + 0.01  # a sleep, a blocked read: no CPU, the same hang
    assert clock.tick() == pytest.approx(4.0)


def test_without_a_thread_cpu_clock_the_wall_time_counts(fake, monkeypatch):
    def none(ident):
        raise OSError("no per-thread clock here")

    monkeypatch.setattr(fake, "pthread_getcpuclockid", none)
    clock = clocks.Clock(clocks.thread_cpu(threading.get_ident()))
    fake.wall += 3.0
    assert clock.tick() == pytest.approx(3.0)


def _busy(seconds: float):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
    return "done"


def test_the_limit_is_counted_on_the_workers_clock_not_the_wall(monkeypatch):
    """A worker whose own clock stands still (as a starved one's nearly does) outlives its limit in wall time."""

    class Frozen(clocks.Clock):
        def tick(self):
            return 0.0

    monkeypatch.setattr(limits, "Clock", Frozen)
    monkeypatch.setenv(limits.ENV["check"], "0.1")
    done = threading.Event()
    threading.Timer(0.5, done.set).start()  # the worker waits for this, five times its limit in wall time
    assert limits.run(lambda: done.wait(5) and "done", "check", "waiting", "puzzles/x.py") == "done"


def test_a_loop_and_a_sleep_are_still_stopped(monkeypatch):
    monkeypatch.setenv(limits.ENV["check"], "0.3")
    with pytest.raises(CircuitError, match=r"^puzzles/x\.py: looping took longer than 0\.3 s and was stopped"):
        limits.run(lambda: _busy(60), "check", "looping", "puzzles/x.py")
    with pytest.raises(CircuitError, match=r"^puzzles/x\.py: waiting took longer than 0\.3 s and was stopped"):
        limits.run(lambda: time.sleep(60), "check", "waiting", "puzzles/x.py")


def test_a_process_cpu_clock_reads_what_the_process_used():
    """The grading sandbox's clock (a submission's process): /proc's user and system time, where there is a /proc."""
    import os

    read = clocks.process_cpu(os.getpid())
    if read() is None:
        pytest.skip("no /proc on this platform: the sandbox counts wall time")
    before = read()
    _busy(0.3)
    assert read() - before >= 0.2  # clock ticks are 10 ms: 0.3 s of work reads at least 0.2 s
    assert clocks.process_cpu(2**22 + 7)() is None  # no such process: nothing to read, wall time counts


def test_the_schedulers_queue_is_read_for_a_learners_process():
    """The sealed child's clock (processes.Child) reads its process's queue the same way: a learner's process on
    a busy machine is charged the CPU it got."""
    import os

    read = clocks.process_queued(os.getpid())
    if read() is None:
        pytest.skip("no schedstat on this platform: a starved process may be charged wall time")
    before = read()
    _busy(0.05)
    assert read() >= before >= 0
    assert clocks.process_queued(2**22 + 7)() is None  # no such process: nothing to read
