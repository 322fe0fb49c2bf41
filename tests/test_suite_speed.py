"""The suite on two cores (tests/conftest.py): the README's plain `pytest` runs on pytest-xdist's workers where it is
installed, tests that share a module-scoped fixture stay on one worker (the fixture is built once), and what a worker
records (a read of the learner's files, the mutation test's kill rates) reaches the controller, which fails the run."""

from __future__ import annotations

import importlib.util
import shutil
import textwrap

import conftest
import pytest
from helpers import ROOT

needs_xdist = pytest.mark.skipif(
    importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed (the dev extra has it)"
)
TWO_CORES = pytest.mark.skipif(conftest._cores() < 2, reason="one core: the suite runs serially")


@needs_xdist
@TWO_CORES
@pytest.mark.parametrize(
    "args, parallel",
    [
        ((), True),
        (("tests",), False),
        (("tests/test_a.py::test_one",), False),
        (("-n", "0"), False),
        (("-n", "3"), False),
        (("--pdb",), False),
        (("-p", "no:xdist"), False),
        (("--collect-only",), False),
    ],
)
def test_only_the_whole_suite_asked_for_plainly_goes_on_the_workers(pytester, args, parallel):
    """`pytest` alone (the README's command: the testpaths) takes one worker per core; naming tests or choosing
    workers, a debugger or no xdist keeps what was asked (`-n 3` stays 3, with xdist's own scheduling)."""
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_a.py").write_text("def test_one():\n    pass\n")
    config = pytester.parseconfig(*args)
    asked = (getattr(config.option, "numprocesses", None), getattr(config.option, "dist", None))
    conftest.pytest_cmdline_main(config)
    now = (getattr(config.option, "numprocesses", None), getattr(config.option, "dist", None))
    assert now == (("auto", "loadgroup") if parallel else asked)


@needs_xdist
def test_a_workers_groups_and_records_reach_the_controller(pytester):
    """A copy of this suite's conftest in a project of eight tests: the six sharing a module-scoped fixture run on one
    worker (the fixture built once), and a read of puzzles/ in a worker fails the whole run with the culprit named."""
    tests = pytester.path / "tests"
    tests.mkdir()
    for name in ("conftest.py", "helpers.py"):
        shutil.copy(ROOT / "tests" / name, tests / name)
    (pytester.path / "puzzles").mkdir()
    (pytester.path / "puzzles" / "01_x.py").write_text("x = 1\n")
    (tests / "test_shared.py").write_text(
        textwrap.dedent("""
        import os
        import pytest

        @pytest.fixture(scope="module")
        def built(tmp_path_factory):
            (tmp_path_factory.getbasetemp().parent / f"built-{os.environ['PYTEST_XDIST_WORKER']}").write_text("x")
            return os.environ["PYTEST_XDIST_WORKER"]

        @pytest.mark.parametrize("k", range(6))
        def test_uses_it(built, k):
            assert built == os.environ["PYTEST_XDIST_WORKER"]
        """)
    )
    (tests / "test_alone.py").write_text(
        textwrap.dedent("""
        import os

        def test_free():
            pass

        def test_reads_the_learners_files():
            os.listdir(os.path.join(os.path.dirname(os.path.dirname(__file__)), "puzzles"))
        """)
    )
    result = pytester.runpytest_subprocess("tests", "-n", "2", "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=8)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the learner's files were read in a worker: the run fails
    said = result.stderr.str()
    assert "the suite read the learner's files" in said and "test_reads_the_learners_files" in said, said
    workers = {line.split("]")[0] for line in result.stdout.lines if "test_uses_it" in line and "PASSED" in line}
    assert len(workers) == 1, result.stdout.str()  # the module's tests on one worker
    assert len({p.name for p in pytester.path.rglob("built-*")}) == 1  # and its fixture built there alone


def test_the_kill_rates_a_worker_sends_are_printed_by_the_controller(pytester):
    """The controller's summary prints what workers sent as (puzzle, line), sorted by puzzle, as a serial run's."""

    class Reporter:
        def __init__(self):
            self.lines = []

        def section(self, title):
            self.lines.append(f"== {title}")

        def write_line(self, line):
            self.lines.append(line)

    config = pytester.parseconfig()
    config.stash[conftest.MUTATION_AUDITS] = [("08_x", "08_x: 9/9 killed"), ("01_y", "01_y: 3/3 killed")]
    reporter = Reporter()
    conftest.pytest_terminal_summary(reporter, 0, config)
    assert reporter.lines[1:] == ["01_y: 3/3 killed", "08_x: 9/9 killed"]
