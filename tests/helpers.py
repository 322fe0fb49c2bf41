"""Shared test helpers: load a reference solution, swap in a wrong answer, check it."""

import contextlib
import signal
from pathlib import Path

from circuits.checking import curriculum
from circuits.checking.loader import load
from circuits.explain import check
from circuits.workspace.reset import stub_text

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = curriculum.folder()  # the shipped reference files; the tests never read puzzles/, the learner's files
STEMS = curriculum.ids()  # every shipped puzzle, new ones included


def ctrl_c_default() -> None:
    """A `preexec_fn` for a child a test sends Ctrl-C: there, SIGINT does what it does in a terminal. A process
    starts with SIGINT ignored when its parent ignores it (a script's background job, as a suite started with `&`
    is), and Python then never raises KeyboardInterrupt: the child would outlive its Ctrl-C and the test hang."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stub(stem: str) -> str:
    """The fresh puzzle file of a shipped puzzle, as `circuits init` and `circuits reset` write it."""
    return stub_text(SOLUTIONS / f"{stem}.py")


def shipped(folder: str, stem: str, dest: Path) -> Path:
    """Write the shipped `puzzles/` (the stub) or `solutions/` (the reference) file of `stem` into `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{stem}.py"
    if folder == "puzzles":
        path.write_text(stub(stem), encoding="utf-8")
    else:
        path.write_bytes((SOLUTIONS / f"{stem}.py").read_bytes())
    return path


def fresh_project(root: Path, stems, folders=("puzzles", "solutions")) -> Path:
    """A project at `root`: solutions/ as shipped and puzzles/ as a learner first gets it (the stubs)."""
    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
        for stem in stems:
            shipped(folder, stem, root / folder)
    return root


def solution(stem: str):
    return load(SOLUTIONS / f"{stem}.py")


def check_with(stem: str, n_random: int = 2000, property_examples: int = 100, margins: bool = False, **answer):
    """Check solutions/<stem>.py with some answer names replaced."""
    attempt = solution(stem)
    for name, value in answer.items():
        setattr(attempt.answer, name, value)
    return check(attempt, n_random=n_random, property_examples=property_examples, margins=margins)


def only_failure(result):
    failed = [t for t in result.targets if t.status == "failed"]
    assert failed, f"expected a failure, got {[t.status for t in result.targets]}"
    return failed[0]


def summary_of(explanation) -> str:
    """A failing target's summary in words, as every report prints it (display words the checker's facts)."""
    from circuits.explain import summary

    return summary(explanation)


def hint_of(explanation) -> str:
    """A failing target's hint in words, in the puzzle's own names and with the checker's notes, as reports print it."""
    from circuits.explain import hint

    return hint(explanation)


def wrong(attempt, edit, examples=None):
    """A copy of `attempt` whose answer (a deep copy of the reference's) `edit(answer, givens)` has changed;
    `examples=[]`: the puzzle without its worked examples, so that general inputs alone must find the flaw."""
    import copy
    import dataclasses
    import types

    answer = types.SimpleNamespace(**{k: copy.deepcopy(v) for k, v in vars(attempt.answer).items()})
    edit(answer, attempt.puzzle.build.__globals__ if attempt.puzzle.build else {})
    trial = copy.copy(attempt)
    trial.answer = answer
    if examples is not None:
        trial.puzzle = dataclasses.replace(attempt.puzzle, examples=examples)
    return trial


def cli_scan(argv: list[str]) -> int:
    """`circuits scan ARGV…` as a function: the exit code, also for --help."""
    from circuits.cli import main

    try:
        return main(["scan", *argv])
    except SystemExit as e:  # --help
        return int(e.code or 0)


def circuits_here(args: list[str], cwd, env: dict | None = None):
    """`circuits ARGS` run in `cwd` by this process (circuits.cli.main, as the console script calls it), with `env`'s
    variables set for it: its exit code and what it printed, as subprocess.run returns them. For a test about what a
    command does, not about its process: it pays no Python start (a learner's file still runs in a sealed child,
    forked from this process's warm one)."""
    import contextlib
    import io
    import subprocess
    import sys

    import pytest

    from circuits.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        for name, value in (env or {}).items():
            mp.setenv(name, value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:  # argparse's --help and usage errors end the process: its exit code
                code = e.code if isinstance(e.code, int) else int(e.code is not None)
                if isinstance(e.code, str):
                    print(e.code, file=sys.stderr)
    return subprocess.CompletedProcess(["circuits", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def tracr_without_random_init():
    """tracr's compiler (compile_rasp_to_model) initialises its haiku model at random, then sets every weight itself:
    the transformer's to zero before writing the compiled ones, the embeddings' from the compiled spaces. The random
    draws, one truncated-normal kernel that jax compiles for each weight's shape, are half a compile's CPU; inside
    this block they are zeros, and the compiled weights are the same (tests/test_tracr.py compares them)."""
    import haiku as hk
    import jax.numpy as jnp
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hk.initializers.TruncatedNormal, "__call__", lambda self, shape, dtype: jnp.zeros(shape, dtype))
        yield
