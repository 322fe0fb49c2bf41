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

# pytester's inline runs drop the modules first imported inside them. With rich half imported before one
# (test_width imports rich.cells) and half inside it, a later run mixed two copies of rich's classes
# ("'Style' object has no attribute 'strip'"): import the display layer, and rich with it, up front.
import circuits.display.report  # noqa: E402, F401

# The verdict cache and reset's backups go to XDG folders; for the whole session (subprocesses inherit them)
# they are a temporary folder, so no test reads a verdict from, or writes one to, the real home.
_HOME = tempfile.mkdtemp(prefix="circuits-tests-")
os.environ["XDG_CACHE_HOME"] = os.path.join(_HOME, "cache")
os.environ["XDG_DATA_HOME"] = os.path.join(_HOME, "data")
atexit.register(shutil.rmtree, _HOME, ignore_errors=True)

MUTATION_AUDITS = pytest.StashKey[list]()


def pytest_configure(config):
    config.stash[MUTATION_AUDITS] = []


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The kill rate per puzzle of tests/test_mutants.py, when it ran."""
    audits = config.stash.get(MUTATION_AUDITS, [])
    if audits:
        terminalreporter.section("mutation test: non-equivalent mutants killed, per puzzle")
        for audit in sorted(audits, key=lambda a: a.puzzle):
            terminalreporter.write_line(audit.describe())
