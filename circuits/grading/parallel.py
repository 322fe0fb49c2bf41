"""Many submissions at once: a process pool on the local cores, or an existing Dask cluster (`--scheduler`)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

from circuits.checking import cores
from circuits.errors import CircuitError
from circuits.grading import grade
from circuits.grading.submission import Submission, read
from circuits.sealed import sandbox


def submissions(sources: list[str]) -> list[Submission]:
    """Read every submission first: a missing one, or two with one student name, stops the run before any grading."""
    subs = [read(s) for s in sources]
    seen: dict[str, str] = {}
    for s in subs:
        if s.student in seen:
            raise CircuitError(
                f"{seen[s.student]} and {s.source} are both student {s.student!r}: "
                "rename one (the student is the folder's or the zip's name)"
            )
        seen[s.student] = s.source
    return subs


_BUSY: list[bool] = [False]  # in a pool's worker: grading now (Ctrl-C must stop the submission's process)
_STOPPED: list[bool] = [False]  # in a pool's worker: a Ctrl-C came while it was idle, so the run is over


def _worker_start() -> None:
    signal.signal(signal.SIGINT, _worker_interrupted)


def _worker_interrupted(signum, frame) -> None:
    """Ctrl-C in a pool's worker: while grading, one KeyboardInterrupt (the sandbox then kills the submission's
    process; a second Ctrl-C must not interrupt that); while idle, nothing: the pool's shutdown ends the worker,
    with no traceback on the instructor's screen, and no submission it is handed after it (one already queued to
    it, between two submissions on a busy machine) is started."""
    if _BUSY[0]:
        _BUSY[0] = False
        raise KeyboardInterrupt
    _STOPPED[0] = True


def grade_safely(sub: Submission, stems: list[str], limits: sandbox.Limits, n_examples: int) -> grade.SubmissionGrade:
    """grade.grade, and if grading itself fails (a bug here, not in the submission), an error row per puzzle:
    one submission never stops the run."""
    _BUSY[0] = True
    try:
        if _STOPPED[0]:  # Ctrl-C reached this worker between two submissions: the next is not started
            raise KeyboardInterrupt
        with cores.sharing(1):  # a core per submission already: each check on its worker's own
            return grade.grade(sub, stems, limits, n_examples)
    except Exception as e:  # noqa: BLE001 - reported in the gradebook, the run goes on
        why = f"grading failed: {type(e).__name__}: {e}"[:300]
        rows = [grade.PuzzleGrade(sub.student, s, "error", 0.0, 1.0, why, f"{s} · error\n{why}\n") for s in stems]
        return grade.SubmissionGrade(sub.student, sub.source, rows, [why])
    finally:
        _BUSY[0] = False


def default_workers() -> int:
    return cores.available()


def grade_all(
    subs: list[Submission],
    stems: list[str],
    workers: int | None = None,
    scheduler: str | None = None,
    limits: sandbox.Limits = sandbox.Limits(),
    n_examples: int = grade.PROPERTY_EXAMPLES,
    done: Callable[[grade.SubmissionGrade], None] | None = None,
) -> list[grade.SubmissionGrade]:
    """Each submission graded once, in the order given; `done` hears of each as it finishes."""
    done = done or (lambda g: None)
    if scheduler:
        return _on_dask(subs, stems, scheduler, limits, n_examples, done)
    workers = max(1, min(workers or default_workers(), len(subs) or 1))
    if workers == 1:
        out = []
        for s in subs:
            out.append(grade_safely(s, stems, limits, n_examples))
            done(out[-1])
        return out
    results: dict[int, grade.SubmissionGrade] = {}
    # spawn: each worker a fresh interpreter (no threads or state carried over from this one)
    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_worker_start)
    try:
        futures = {pool.submit(grade_safely, s, stems, limits, n_examples): n for n, s in enumerate(subs)}
        for f in as_completed(futures):
            results[futures[f]] = f.result()
            done(results[futures[f]])
    except BaseException:  # Ctrl-C, or an output that cannot be written: no one else is started, and each
        workers = list((getattr(pool, "_processes", None) or {}).values())  # worker still grading stops its
        pool.shutdown(wait=False, cancel_futures=True)  # submission's process
        stop(workers)
        raise
    pool.shutdown()
    return [results[n] for n in range(len(subs))]


STOP_SECONDS = 10.0  # after a Ctrl-C, how long a worker may take to stop its submission's process and end


def stop(workers: list, seconds: float = STOP_SECONDS) -> None:
    """Ctrl-C to each worker (one grading stops its submission's process), then any still running after `seconds`
    killed: the command never waits on a worker that missed it (on a busy machine one can be caught between two
    submissions). A killed worker's submission process dies with it (sealed/walls.py: death with its parent)."""
    for worker in workers:
        try:
            os.kill(worker.pid, signal.SIGINT)
        except (ProcessLookupError, TypeError):
            pass
    deadline = time.monotonic() + seconds
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
            worker.join(seconds)


def _on_dask(subs, stems, address, limits, n_examples, done) -> list[grade.SubmissionGrade]:
    """The same tasks on an existing Dask cluster; each worker runs the submission's process on its own machine."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise CircuitError("--scheduler needs Dask: pip install 'circuits-workbench[cluster]'") from None
    try:
        client = Client(address, timeout="20s")
    except (OSError, TimeoutError) as e:
        raise CircuitError(f"--scheduler {address}: cannot reach the Dask scheduler ({e})") from None
    with client:
        futures = [client.submit(grade_safely, s, stems, limits, n_examples, pure=False) for s in subs]
        index = {f.key: n for n, f in enumerate(futures)}
        results: dict[int, grade.SubmissionGrade] = {}
        for f in dask_completed(futures):
            results[index[f.key]] = f.result()
            done(results[index[f.key]])
    return [results[n] for n in range(len(subs))]
