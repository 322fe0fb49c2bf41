"""Test settings: deterministic hypothesis, no example database written anywhere, the cache and backups in a
temporary folder (never the real home); the mutation test's kill rates; the whole suite on one pytest-xdist
worker per core where xdist is installed (tests/test_suite_speed.py)."""

import atexit
import os
import shutil
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "circuits",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=60,
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
# No warm server (circuits/cli/server.py): a `circuits` command a test runs is answered by its own process, as the
# test means, and leaves nothing running after it (tests/test_server.py turns it on where it tests it).
os.environ["CIRCUITS_SERVER"] = "0"
# tracr (tests/test_tracr*.py) runs jax eagerly: XLA compiles each operation of a compiled model's set-up and
# forward pass for its shapes, and LLVM's optimisation of those small kernels is most of those tests' CPU. At
# level 0 the numbers they compare are the same (the residual and logit gaps printed are unchanged), for a
# third less CPU. A level the user set is kept.
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")

MUTATION_AUDITS = pytest.StashKey[list]()

# The suite never reads the learner's files: whatever state the project's puzzles/ is in (solved, half done,
# deleted), `pytest` stays green. Every open or listing of that folder by this process is recorded, and a
# session that made one fails (tests/test_workspace.py shows the recorder catches both).
LEARNER_FILES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "puzzles")
READ_LEARNER_FILES: list[str] = []


def learner_file_recorder(folder: str, into: list):
    """An audit hook that appends to `into` every path under `folder` this process opens or lists."""

    def hook(event: str, args: tuple) -> None:
        if event in ("open", "os.scandir", "os.listdir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
            try:
                path = os.path.abspath(os.fsdecode(args[0]))
            except (TypeError, ValueError):
                return
            if path == folder or path.startswith(folder + os.sep):
                into.append(f"{path} ({os.environ.get('PYTEST_CURRENT_TEST', 'outside a test')})")

    return hook


sys.addaudithook(learner_file_recorder(LEARNER_FILES, READ_LEARNER_FILES))


@pytest.fixture(scope="session")
def reference_result():
    """`reference_result(stem)`: the check of solutions/<stem>.py (2000 random inputs, a 50-example property
    test, no margins), run once per session for every test that reads it."""
    from helpers import solution

    from circuits.explain import check

    done: dict = {}

    def of(stem: str):
        if stem not in done:
            done[stem] = check(solution(stem), n_random=2000, property_examples=50, margins=False)
        return done[stem]

    return of


# --- two cores: the README's plain `pytest` runs on pytest-xdist's workers, where it is installed ---------------
def _worker(config) -> bool:
    """An xdist worker's config (not the environment: a pytest a test starts inherits PYTEST_XDIST_WORKER)."""
    return hasattr(config, "workerinput")


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """The whole suite (`pytest` with no paths, as the README says) runs on one worker per core when pytest-xdist
    is installed (the [dev] extra) and the machine has two or more; `-n N` (`-n 0`: serially), `-p no:xdist`,
    `--pdb` or naming files or tests run as asked. Tests that share a module-scoped fixture stay on one worker."""
    if (
        config.pluginmanager.hasplugin("xdist")
        and not _worker(config)
        and config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and config.option.numprocesses is None
        and config.option.dist == "no"
        and not config.option.tx
        and not config.getoption("usepdb", False)
        and not config.option.collectonly
        and _cores() >= 2
    ):
        config.option.numprocesses = "auto"  # one per core; PYTEST_XDIST_AUTO_NUM_WORKERS overrides
        config.option.dist = "loadgroup"
        os.environ.setdefault("CIRCUITS_WORKERS", "1")  # a worker per core already: no check forks copies of its own


# pytest 9.2 keeps a node's id structured (Node._id); xdist 3.8's loadgroup still sets Node._nodeid, which no
# longer renames anything, so its groups would be lost: the suite names them itself there
_STRUCTURED_IDS = hasattr(pytest.Item, "id")


def _rename(item, nodeid: str) -> None:
    if _STRUCTURED_IDS:
        from _pytest.nodes import coerce_node_id

        item._id = coerce_node_id(nodeid)
    else:
        item._nodeid = nodeid


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups
def pytest_collection_modifyitems(config, items):
    """Under xdist, a test that uses a module-scoped fixture runs on the worker that runs its module's others, so
    the fixture (a class graded, every puzzle rendered) is built once per run, not once per worker."""
    if not _worker(config):
        return
    for item in items:
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(d.scope in ("module", "class", "package") for ds in defs.values() for d in ds):
            group = item.module.__name__ if item.module else item.nodeid
            item.add_marker(pytest.mark.xdist_group(group))
            if not config.getvalue("loadgroup") or _STRUCTURED_IDS:  # xdist names the group in the node id
                _rename(item, f"{item.nodeid}@{group}")  # (circuits' scheduler reads it) only where it can
    # the workers take work in collection order: the groups (the long ones) first, so none is left for the end
    # while the other worker waits (every worker sorts its identical collection the same way)
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)


def pytest_configure(config):
    config.stash[MUTATION_AUDITS] = []


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown where xdist is missing
def pytest_testnodedown(node, error):
    """The controller gathers what each worker recorded: learner files read, the mutation test's kill rates."""
    output = getattr(node, "workeroutput", {})
    READ_LEARNER_FILES.extend(output.get("read_learner_files", []))
    node.config.stash[MUTATION_AUDITS].extend(output.get("mutation_audits", []))


def pytest_sessionfinish(session, exitstatus):
    if _worker(session.config):  # the controller reports and sets the exit status (pytest_testnodedown)
        from circuits.display.words import audit_summary

        output = getattr(session.config, "workeroutput", {})
        output["read_learner_files"] = list(READ_LEARNER_FILES)
        audits = session.config.stash.get(MUTATION_AUDITS, [])
        output["mutation_audits"] = [(a.puzzle, audit_summary(a)) for a in audits]
        return
    if READ_LEARNER_FILES:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        where = "; ".join(dict.fromkeys(READ_LEARNER_FILES[:3]))
        print(
            f"\nthe suite read the learner's files in {LEARNER_FILES} ({where}): tests read the curriculum's "
            "copies (helpers.stub, helpers.shipped), never puzzles/",
            file=sys.stderr,
        )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The kill rate per puzzle of tests/test_mutants.py, when it ran."""
    from circuits.display.words import audit_summary

    audits = config.stash.get(MUTATION_AUDITS, [])
    if audits:
        terminalreporter.section("mutation test: non-equivalent mutants killed, per puzzle")
        lines = [
            a if isinstance(a, tuple) else (a.puzzle, audit_summary(a)) for a in audits
        ]  # a worker's: (puzzle, line)
        for _, line in sorted(lines):
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def reference():
    """The reference attempts, loaded once per session and shared: reference(stem) -> Attempt (never edit it; a
    wrong answer is helpers.wrong's copy of one). Session-wide, so the tests that use it are not held to one xdist
    worker per module (see pytest_collection_modifyitems)."""
    from helpers import solution

    loaded: dict = {}

    def get(stem: str):
        if stem not in loaded:
            loaded[stem] = solution(stem)
        return loaded[stem]

    return get
