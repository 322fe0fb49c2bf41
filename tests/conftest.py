"""Test settings: deterministic hypothesis, no example database written anywhere; the mutation test's kill rates."""

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "circuits", derandomize=True, database=None, deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("circuits")

pytest_plugins = ["pytester"]

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
