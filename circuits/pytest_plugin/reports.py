"""Reports: whole lines for programs, trimmed lines for the terminal, the same under xdist; the summary table."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from circuits.pytest_plugin.base import (
    _CONFIG,
    _NAME,
    _NOT_CHECKED,
    _RESULTS,
    Failure,
    _Crash,
)
from circuits.pytest_plugin.collect import PuzzleItem


# --- reports: whole lines for programs, trimmed lines for the terminal, the same under xdist -------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Facts a report carries to the controller under xdist (a worker sends a custom longrepr as its text)."""
    report = yield
    if isinstance(report.longrepr, Failure):
        report.circuits_line = report.longrepr.reprcrash.message
    if isinstance(item, PuzzleItem):
        report.circuits_name = item.whole_name
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    """Before JUnit XML reads the report: its failure line back (under xdist it came as text) and its whole name."""
    line = getattr(report, "circuits_line", None)
    if line is not None and isinstance(report.longrepr, str):
        report.longrepr = Failure(report.longrepr, line)
    name = getattr(report, "circuits_name", None)
    xml = _junit_xml() if name else None
    if xml is not None:
        xml.node_reporter(report).add_attribute("name", name)


@pytest.hookimpl(trylast=True, specname="pytest_runtest_logreport")
def pytest_circuits_trim_summary_line(report):  # named pytest_*: pytest reads hook options only there
    """After every plugin has the whole line: trimmed so "FAILED <node id> - <line>" fits the terminal."""
    if isinstance(report.longrepr, Failure) and report.longrepr.reprcrash is not None and _CONFIG:
        room = _CONFIG[-1].get_terminal_writer().fullwidth - len(f"FAILED {report.nodeid} - ")
        first = report.longrepr.reprcrash.message
        if room < 8:  # no summary message at all: the node id alone fills the line
            report.longrepr.reprcrash = None
        elif len(first) > room:
            report.longrepr.reprcrash = _Crash(first[: room - 1] + "…")


def _junit_xml():
    if not _CONFIG:
        return None
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # a pytest without it: the name stays the node id's
        return None
    return _CONFIG[-1].stash.get(xml_key, None)


# --- xdist: a puzzle file's targets on one worker, the summary on the controller ----------------------------
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist load, loadgroup or worksteal would split a puzzle file's targets over workers, and each would check
    the whole file: keep each NN_*.py file's items together, everything else scheduled as asked."""
    if config.getoption("dist", "no") not in ("load", "loadgroup", "worksteal"):
        return None  # loadscope and loadfile keep files whole already; each and no do not split
    from xdist.scheduler import LoadScopeScheduling

    class PuzzleFileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # an xdist_group mark, as --dist loadgroup reads it
                return nodeid.split("@")[-1]
            file = nodeid.split("::", 1)[0]
            return file if _NAME.match(Path(file).name) else nodeid

    return PuzzleFileScheduling(config, log)


_ORDER = pytest.StashKey[dict]()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """The collection order, so the controller's summary lists puzzles as a serial run does."""
    order = node.config.stash.setdefault(_ORDER, {})
    for nodeid in ids:
        order.setdefault(nodeid.split("::", 1)[0], len(order))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """A worker is done: its puzzles' summary rows join the controller's."""
    sent = getattr(node, "workeroutput", {}).get("circuits", [])
    node.config.stash[_RESULTS].extend((facts["nodeid"], _received(facts)) for facts in sent)


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):  # an xdist worker: send the rows, as plain data
        session.config.workeroutput["circuits"] = [_sent(nodeid, r) for nodeid, r in session.config.stash[_RESULTS]]


def _sent(nodeid: str, r) -> dict:
    """What the summary table and the progress line read of a result, as data execnet can carry: the result's
    `to_dict` and the parts of its file the summary reads."""
    a = r.attempt
    return {
        "nodeid": nodeid,
        "result": r.to_dict(),
        "path": str(a.path) if a else None,
        "missing": list(a.missing) if a else [],
        "difficulty": a.puzzle.difficulty if a else None,
        "minutes": a.puzzle.minutes if a else None,
        "edits": [[e.name, e.line, e.removed] for e in a.edits] if a else [],
    }


class _Received:
    """The parts of an Attempt the summary reads, for a result checked on an xdist worker."""

    def __init__(self, facts: dict):
        from circuits.checking.givens import Edit

        self.path = Path(facts["path"])
        self.missing = facts["missing"]
        self.puzzle = types.SimpleNamespace(
            id=facts["result"]["puzzle"], difficulty=facts.get("difficulty"), minutes=facts.get("minutes")
        )
        self.edits = [Edit(name, line, removed) for name, line, removed in facts.get("edits", [])]


def _received(facts: dict):
    """A worker's result rebuilt from its facts: the same classes, so the summary says it in the same words."""
    from circuits.checking.results import PuzzleResult

    return PuzzleResult.from_dict(facts["result"], _Received(facts) if facts["path"] else None)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if hasattr(config, "workerinput"):
        return
    for said in config.stash.get(_NOT_CHECKED, []):
        terminalreporter.write_line(f"circuits: {said}", yellow=True)
    order = config.stash.get(_ORDER, {})
    rows = {}
    for nodeid, r in config.stash.get(_RESULTS, []):  # one row per file (--dist each checks it on every worker)
        rows.setdefault(nodeid, r)
    if order:  # under xdist: as a serial run would list them
        rows = {n: rows[n] for n in sorted(rows, key=lambda n: (order.get(n, len(order)), n))}
    results = list(rows.values())
    if results:
        _summary(terminalreporter, config, results)
    from circuits.io import paths
    from circuits.limits import take_warnings, warnings_line

    warned = warnings_line(take_warnings(), paths.shown)
    if warned:  # after the summary, paths as typed: never before the report with absolute paths
        terminalreporter.write_line(f"circuits: note: the puzzle files' code warned: {warned}", yellow=True)


def _summary(terminalreporter, config, results) -> None:
    import io

    from circuits.display.report import edited_givens, progress, summary_table
    from circuits.display.terminal import console

    buf = io.StringIO()
    width = terminalreporter._tw.fullwidth
    c = console(file=buf, color=terminalreporter._tw.hasmarkup, width=width)
    which = "solutions" if config.getoption("--solutions") else "your puzzles"
    c.print(summary_table(results, title=f"circuits · {which}"))
    c.print(progress(results))
    for line in (line for r in results for line in edited_givens(r)):
        c.print(line)
    terminalreporter.write("\n" + buf.getvalue())
