"""Test settings: deterministic hypothesis, no example database written anywhere, the cache and backups in a
temporary folder (never the real home); the mutation test's kill rates."""

import atexit
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "circuits", derandomize=True, database=None, deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("circuits")

pytest_plugins = ["pytester"]

# The verdict cache and reset's backups go to XDG folders; for the whole session (subprocesses inherit them)
# they are a temporary folder, so no test reads a verdict from, or writes one to, the real home.
_HOME = tempfile.mkdtemp(prefix="circuits-tests-")
os.environ["XDG_CACHE_HOME"] = os.path.join(_HOME, "cache")
os.environ["XDG_DATA_HOME"] = os.path.join(_HOME, "data")
atexit.register(shutil.rmtree, _HOME, ignore_errors=True)

MUTATION_AUDITS = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def reference_result():
    """`reference_result(stem)`: the check of solutions/<stem>.py (2000 random inputs, a 50-example property
    test, no margins), run once per session for every test that reads it."""
    from helpers import solution

    from circuits.checking.checker import check

    done: dict = {}

    def of(stem: str):
        if stem not in done:
            done[stem] = check(solution(stem), n_random=2000, property_examples=50, margins=False)
        return done[stem]

    return of


def pytest_configure(config):
    config.stash[MUTATION_AUDITS] = []


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The kill rate per puzzle of tests/test_mutants.py, when it ran."""
    audits = config.stash.get(MUTATION_AUDITS, [])
    if audits:
        terminalreporter.section("mutation test: non-equivalent mutants killed, per puzzle")
        for audit in sorted(audits, key=lambda a: a.puzzle):
            terminalreporter.write_line(audit.describe())
