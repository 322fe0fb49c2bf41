"""Work shared across the cores (checking/cores.py): a check's batches on threads and an audit's mutants in forked
copies give what one thread gives, bit for bit, in the same order; an item that raises raises as on one thread; a
copy that dies costs only time; a time limit stops the wait and the copies. What forks runs in a fresh interpreter,
where no thread another test left behind can stop a fork (cores.can_fork)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest
from helpers import ROOT

from circuits.checking import cores


def _run(code: str, env: dict | None = None) -> str:
    import os

    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])} | (env or {}),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_items_come_back_in_order_from_every_process():
    said = _run(
        """
        import os, time
        from circuits.checking import cores
        me = os.getpid()
        assert cores.can_fork()

        def fn(x):
            time.sleep(0.002)  # long enough for the copy to start and take items
            return x * x, os.getpid(), cores.can_fork()

        out = cores.forked(fn, list(range(200)), 2)
        import threading
        from circuits import limits
        go = threading.Event()
        other = threading.Thread(target=go.wait)
        other.start()
        assert not cores.can_fork()  # a thread that may hold a lock: no copy
        setattr(other, limits.QUIET, True)  # one that only waits (the served command's watch on its client)
        assert cores.can_fork()
        go.set()
        other.join()
        assert limits.run(cores.can_fork, "check", "checking", "a check")  # the caller waits for its worker
        assert [r[0] for r in out] == [x * x for x in range(200)]
        others = {pid for _, pid, _ in out if pid != me}
        assert len(others) == 1 and cores.FORKS[0] == 1, (others, cores.FORKS)
        assert not any(can for _, pid, can in out if pid != me)  # a copy never forks again
        print("ok")
        """
    )
    assert said == "ok\n"


def test_an_item_that_raises_raises_as_on_one_process_and_a_dead_copy_costs_only_time():
    said = _run(
        """
        import os, signal, time
        from circuits.checking import cores
        me = os.getpid()

        def fn(x):
            time.sleep(0.002)  # both processes take items
            if x in (30, 70):
                raise ValueError(f"item {x}")
            return x

        try:
            cores.forked(fn, list(range(100)), 2)
        except ValueError as e:
            assert str(e) == "item 30", e  # the first in order, whichever process took it
        else:
            raise AssertionError("no error")

        def dies(x):
            if os.getpid() != me and x > 5:
                os.kill(os.getpid(), signal.SIGKILL)  # the copy dies holding an item
            time.sleep(0.001)
            return -x

        assert cores.forked(dies, list(range(50)), 2) == [-x for x in range(50)]
        real_fork, before = os.fork, cores.FORKS[0]

        def no_fork():
            raise BlockingIOError("Resource temporarily unavailable")

        os.fork = no_fork  # a process limit: no copy, the items done here
        assert cores.forked(lambda x: -x, list(range(50)), 2) == [-x for x in range(50)]
        assert cores.FORKS[0] == before
        os.fork = real_fork
        assert cores.forked(dies, list(range(50)), 2, until=time.perf_counter() - 1) == [None] * 50
        print("ok")
        """
    )
    assert said == "ok\n"


def test_a_time_limit_stops_the_wait_and_ends_the_copy(tmp_path):
    said = _run(
        f"""
        import os, time
        from pathlib import Path
        from circuits import limits
        from circuits.checking import cores
        from circuits.errors import CircuitError
        me = os.getpid()

        def fn(x):
            if os.getpid() != me:
                Path({str(tmp_path / "pid")!r}).write_text(str(os.getpid()))
                time.sleep(600)
            time.sleep(0.2)  # the copy takes the other item meanwhile
            return x

        try:
            limits.run(lambda: cores.forked(fn, [1, 2], 2), "check", "checking", "a check")
        except CircuitError as e:
            assert "took longer than 2 s" in str(e), e
        else:
            raise AssertionError("not stopped")
        pid = int(Path({str(tmp_path / "pid")!r}).read_text())
        for _ in range(200):  # the stopped worker kills its copy within a look or two (cores.POLL)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                print("ok")
                break
            time.sleep(0.05)
        """,
        env={"CIRCUITS_CHECK_SECONDS": "2"},
    )
    assert said == "ok\n"


CHECKS = """
    import copy, json, os
    from circuits.checking import cores
    from circuits.display.json import result_json
    from circuits.display.notebook import result_text
    from circuits.explain import check
    from helpers import solution, wrong

    def shown(result):
        for r in (result, *result.targets):
            r.seconds = 0.0
        return result_text(result, width=80) + json.dumps(result_json(result), sort_keys=True, default=str)

    ref = solution("01_consonants")
    answers = {
        "solved": ref,
        # no worked examples: the shared stages (every small input, random inputs) find the flaw
        "too blunt": wrong(ref, lambda a, g: setattr(a, "W_K", [[0, 2]]), examples=[]),
        "overflows": wrong(ref, lambda a, g: setattr(a, "W_K", [[0, 1e308]]), examples=[]),
    }
    said = {}
    for workers in ("1", "2"):
        os.environ["CIRCUITS_WORKERS"] = workers
        before = cores.THREADED[0]
        said[workers] = {name: shown(check(copy.copy(a), margins=name == "solved")) for name, a in answers.items()}
        print(workers, cores.THREADED[0] - before, [r.splitlines()[0] for r in said[workers].values()])
    assert said["1"] == said["2"]
    print("same")
"""


def test_a_check_on_two_threads_says_what_it_says_on_one():
    """01's random and exhaustive stages are shared (each over SHARED_TOKENS): the reports of a solved answer (with
    its margins), a failing one and one whose model overflows are the same, byte for byte."""
    said = _run(CHECKS).splitlines()
    one, two = said[0].split(" ", 2), said[1].split(" ", 2)
    assert one[1] == "0" and int(two[1]) > 0, said  # one thread shared no batch; two did
    assert [s.rsplit(" · ", 1)[-1] for s in ast.literal_eval(one[2])] == ["solved", "failing", "error"], said
    assert said[-1] == "same", said


def test_an_audit_on_two_processes_judges_as_on_one():
    said = _run(
        """
        from circuits.audit.allowed_mutants import allowed_for
        from circuits.audit.run import audit
        from circuits.checking import cores
        from helpers import solution

        ref = solution("04_previous_token")
        one = audit(ref, allowed_for(ref), workers=1)
        assert cores.FORKS[0] == 0
        two = audit(ref, allowed_for(ref), workers=2)
        assert cores.FORKS[0] >= 1
        fields = ("killed", "allowed", "spared", "survived", "made", "not_run")
        assert [getattr(one, f) for f in fields] == [getattr(two, f) for f in fields]
        print(len(one.killed), "killed")
        """
    )
    assert said.endswith(" killed\n") and not said.startswith("0 ")


def test_grading_keeps_each_check_on_its_worker():
    with cores.sharing(1):
        with cores.sharing(4):
            assert cores.workers() == 1
    with cores.sharing(3):
        assert cores.workers() == 3
    assert cores.workers() == 1  # none chosen: one


def test_an_authors_puzzle_with_no_reference_is_checked_on_one_process(tmp_path):
    from helpers import SOLUTIONS, solution

    from circuits.checking import checker

    mine = tmp_path / "my_puzzle.py"
    mine.write_text((SOLUTIONS / "01_consonants.py").read_text())
    ref = solution("01_consonants")
    assert checker._processes(ref) == cores.count()
    import copy

    theirs = copy.copy(ref)
    theirs.path, theirs.reference = mine, None
    assert checker._processes(theirs) == 1


@pytest.mark.parametrize("raw, n", [("3", 3), ("0", None), ("two", None)])
def test_the_workers_variable(monkeypatch, raw, n):
    monkeypatch.setenv(cores.ENV, raw)
    monkeypatch.delattr("os.sched_getaffinity", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 5)
    assert cores.count() == (n or 5)


def test_threads_give_the_items_in_order_and_raise_the_first_failure_in_order():
    import threading
    import time

    from circuits.targets import once

    seen = set()

    from circuits import limits

    def fn(x):
        time.sleep(0.001)  # both threads take items
        seen.add(threading.get_ident())
        limits.doing("checking target x")  # what a part's scoring records of its thread
        if x in (30, 70):
            raise ValueError(f"item {x}")
        return x * x

    before = cores.THREADED[0]
    assert cores.threaded(lambda x: x * x, list(range(100)), 2) == [x * x for x in range(100)]
    assert cores.THREADED[0] == before + 1
    with pytest.raises(ValueError, match="item 30"):
        cores.threaded(fn, list(range(100)), 2)
    assert len(seen) == 2
    helpers = seen - {threading.get_ident()}
    assert not helpers & set(limits._since), "a helper's time would count against a later thread of its ident"
    with once.per_check():  # a helper shares the check's memo: what it computes is not computed again
        calls, both = [], threading.Barrier(2, timeout=30)
        spec = lambda toks: calls.append(tuple(toks)) or len(toks)  # noqa: E731

        def each_thread_one(batch):
            both.wait()  # one item on each thread
            return once.each(("n", spec), batch, spec)

        assert cores.threaded(each_thread_one, [[["a"]], [["b", "c"]]], 2, once.joined()) == [[1], [2]]
        assert once.each(("n", spec), [["a"], ["b", "c"]], spec) == [1, 2]
        assert sorted(calls) == [("a",), ("b", "c")]  # each once: the helper's value is in the memo
