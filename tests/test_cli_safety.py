"""The command line is safe to get wrong: every mistake is one line on stderr naming the culprit, exit 2,
no traceback, and no file a learner wrote is overwritten (an --html page goes only where circuits wrote one).

Each case runs the command in a copy of part of the project as its working directory and compares every file's
hash before and after: by circuits.cli.main in this process (helpers.circuits_here; a learner's file still runs in
its sealed child), or, where the case is about a process (Ctrl-C, a closed output, `python -m circuits`, the CPU a
refused command's process used, a folder's permissions), as a learner runs it, `python -m circuits.cli` in a
subprocess.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT, circuits_here, ctrl_c_default, fresh_project

from circuits import Head, Model, Vocab

CIRCUITS = [sys.executable, "-m", "circuits.cli"]
STEMS = ("01_consonants", "03_uniform")  # 01's model has no positional embeddings, so no n_ctx
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "HYPOTHESIS"))},
    "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
}


@pytest.fixture
def project(tmp_path):
    """puzzles/ and solutions/ with puzzles 01 and 03 (puzzles/ as shipped: not attempted)."""
    return fresh_project(tmp_path, STEMS)


def hashes(root) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def run(root, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CIRCUITS, *argv], cwd=root, env=ENV, capture_output=True, text=True, timeout=timeout)


def here(root, *argv: str) -> subprocess.CompletedProcess:
    """`circuits ARGV` in `root` by circuits.cli.main in this process, with run's environment."""
    return circuits_here(list(argv), root, {k: v for k, v in ENV.items() if os.environ.get(k) != v})


def refused(root, *argv: str, culprit: list[str], via=here) -> str:
    """The command exits 2 with one `circuits…:` line naming every part of `culprit`, and changes no file. `via`:
    here (this process) or run (a process of its own)."""
    before = hashes(root)
    result = via(root, *argv)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 2, f"exit {result.returncode}; stderr: {result.stderr}"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"stderr is not one line:\n{result.stderr}"
    assert re.match(r"circuits( scan)?: ", lines[0]), lines[0]
    for part in culprit:
        assert part in lines[0], f"{part!r} not in {lines[0]!r}"
    assert hashes(root) == before, "a file changed"
    return lines[0]


# --- 1. --html never overwrites a learner's file ----------------------------------------------------------
@pytest.mark.parametrize("target", ["puzzles/01_consonants.py", "solutions/01_consonants.py"])
@pytest.mark.parametrize("command", [["show", "1", "ab"], ["analyze", "1"]])
@pytest.mark.parametrize("force", [[], ["--force"]])
def test_html_never_overwrites_a_puzzle_or_solution(project, command, target, force):
    refused(
        project,
        *command,
        "--solution",
        "--html",
        target,
        *force,
        culprit=[target, "is a Python file", "HTML is never written over one"],
    )


def test_html_overwrites_another_file_only_with_force_and_its_own_pages_freely(project):
    notes = project / "notes.txt"
    notes.write_text("my notes\n")
    refused(
        project,
        "show",
        "1",
        "ab",
        "--solution",
        "--html",
        "notes.txt",
        culprit=["notes.txt exists and circuits did not write it", "--force"],
    )
    assert here(project, "show", "1", "ab", "--solution", "--html", "notes.txt", "--force").returncode == 0
    assert '<meta name="generator" content="circuits">' in notes.read_text()
    for argv in (["show", "1", "ab"], ["analyze", "1"]):  # a page circuits wrote is replaced without --force
        result = here(project, *argv, "--solution", "--html", "notes.txt")
        assert result.returncode == 0 and not result.stderr, result.stderr


# --- 2. --html where no file can be written -----------------------------------------------------------------
@pytest.mark.parametrize(
    "target, culprit",
    [
        ("nowhere/page.html", ["nowhere/page.html", "nowhere is not an existing folder"]),
        ("puzzles", ["puzzles is a folder", "give a file name"]),
        ("puzzles/01_consonants.py/page.html", ["puzzles/01_consonants.py is not an existing folder"]),
        ("loop.html", ["loop.html is a link that leads nowhere"]),
    ],
)
def test_html_where_no_page_can_go(project, target, culprit):
    (project / "loop.html").symlink_to("loop.html")
    refused(project, "show", "1", "ab", "--solution", "--html", target, culprit=culprit)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_html_into_a_folder_without_write_permission(project):
    locked = project / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        refused(
            project,
            "analyze",
            "1",
            "--solution",
            "--html",
            "locked/page.html",
            culprit=["locked/page.html", "permission denied"],
            via=run,
        )
    finally:
        locked.chmod(0o700)


# --- 3, 9. puzzle names and paths that name nothing ----------------------------------------------------------
@pytest.mark.parametrize(
    "name, culprit",
    [
        ("²", ["'²'", "digits 0-9"]),
        ("x" * 300 + ".py", ["x" * 40, "too long"]),
        ("loop.py", ["loop.py: a symlink loop"]),
    ],
)
def test_a_puzzle_name_or_path_that_names_nothing(project, name, culprit):
    (project / "loop.py").symlink_to("loop.py")
    refused(project, "check", name, culprit=culprit)


def test_list_names_a_symlink_loop_once_and_goes_on(project):
    (project / "puzzles" / "09_loop.py").symlink_to("09_loop.py")
    result = here(project, "list")
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "puzzles/09_loop.py: a symlink loop" in lines[0], result.stderr
    assert "03_uniform" in result.stdout


# --- 7. `list` names a broken file once -------------------------------------------------------------------------
def test_list_names_a_broken_file_once(project):
    with open(project / "puzzles" / "03_uniform.py", "a", encoding="utf-8") as f:
        f.write("x = (\n")
    result = here(project, "list")
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].count("03_uniform.py") == 1 and "syntax error" in lines[0], lines[0]
    assert result.returncode == 1  # a broken puzzle file is not a clean listing
    rows = [line for line in result.stdout.splitlines() if "03_uniform" in line]
    assert rows and "error" in rows[0], result.stdout  # a row of its own, never dropped


# --- 4, 5. sizes and seeds out of range ------------------------------------------------------------------------
def children_cpu() -> float:
    """CPU seconds of this process's finished children: the work a command did, however busy the machine."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def test_an_input_beyond_the_token_limit_is_refused_at_once(project):
    start = children_cpu()
    refused(
        project,
        "show",
        "1",
        "a" * 100_000,
        "--solution",
        culprit=["100000 tokens", "at most 1024", "MAX_TOKENS"],
        via=run,  # its process's CPU is measured
    )
    assert children_cpu() - start < 30  # refused before running the model: no 100000² pattern was computed


@pytest.fixture
def no_n_ctx(project):
    """Puzzle 01's reference model saved as a weight file: it has no positional embeddings, so no n_ctx."""
    from circuits.checking.loader import load
    from circuits.io.export import save

    model = load(project / "solutions" / "01_consonants.py").model()
    assert model.n_ctx is None
    save(model, project / "model.npz")
    rng = np.random.default_rng(0)
    heads = [Head(**{w: rng.normal(size=(2, 8)) for w in ("W_Q", "W_K", "W_V")}) for _ in range(4)]
    save(Model(Vocab.numbered(8), np.eye(8), layers=[heads]), project / "heads.npz")
    return project


@pytest.mark.parametrize(
    "option, culprit",
    [
        (["--seed", "-1"], ["--seed -1", "≥ 0"]),
        (
            ["--seq-len", "100000"],
            ["--seq-len 100000", "200000 tokens", "at most 1024", "MAX_TOKENS", "--seq-len ≤ 512"],
        ),
        (["--seq-len", "0"], ["--seq-len 0"]),
        (["--batch", "100000"], ["--batch 100000", "MAX_BATCH"]),
        (["--top", "0"], ["--top 0"]),
        (
            ["--npz", "heads.npz", "--seq-len", "512", "--batch", "64"],
            ["--batch 64 × 1024 tokens on 4 heads", "the limit is 512 MiB", "MAX_PATTERN_BYTES"],
        ),
    ],
)
def test_scan_numbers_out_of_range(no_n_ctx, option, culprit):
    refused(no_n_ctx, "scan", *(["--npz", "model.npz"] if "--npz" not in option else []), *option, culprit=culprit)


# --- 6. --solution with a file path ----------------------------------------------------------------------------
def test_show_with_a_path_and_solution_shows_the_solution(project):
    unattempted = here(project, "show", "puzzles/01_consonants.py", "abcce")
    assert unattempted.returncode == 2 and "not attempted" in unattempted.stderr
    result = here(project, "show", "puzzles/01_consonants.py", "abcce", "--solution")
    assert result.returncode == 0, result.stderr
    assert "head 0.0" in result.stdout and not result.stderr


def test_solution_for_a_path_without_one(project):
    shutil.copy2(project / "puzzles" / "03_uniform.py", project / "mine.py")
    refused(project, "check", "mine.py", "--solution", culprit=["--solution", "mine.py", "no reference solution"])


# --- 8. Ctrl-C and a closed output -------------------------------------------------------------------------------
READY = (
    "circuits-test: the puzzle file is loading"  # the child's readiness signal: Ctrl-C after it, never after a sleep
)


def test_ctrl_c_while_a_puzzle_loads_is_one_line_and_exit_130(project):
    path = project / "puzzles" / "03_uniform.py"
    path.write_text(
        f"import sys, time\nprint({READY!r}, file=sys.stderr, flush=True)\ntime.sleep(600)\n"
        + path.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    env = {**ENV, "CIRCUITS_IMPORT_SECONDS": "3600"}  # however slow the machine, Ctrl-C comes before the limit
    proc = subprocess.Popen(
        [*CIRCUITS, "check", "3"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_default,
    )
    try:
        first = proc.stderr.readline()  # blocks until the puzzle file is being loaded (or the command ended)
        assert first.strip() == READY, f"the command ended before loading the puzzle: {first}{proc.stderr.read()}"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in out + err, err
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["circuits: interrupted (Ctrl-C)"]


def test_a_closed_pipe_is_quiet(project):
    proc = subprocess.Popen([*CIRCUITS, "list"], cwd=project, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # `circuits list | head -0`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1  # as Python's docs advise for EPIPE (and rich does): the output was lost
    assert err == "", err


def test_a_closed_stdout_still_gives_the_exit_code(project):
    result = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *CIRCUITS, "check", "3", "--solution", "--no-margins"],
        cwd=project,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr and result.returncode == 0, result.stderr


def test_python_dash_m_circuits_is_the_command():
    """`python -m circuits` runs the same command line (for when the `circuits` script is not on PATH)."""
    ok = subprocess.run([sys.executable, "-m", "circuits", "--help"], capture_output=True, text=True, env=ENV)
    assert ok.returncode == 0 and ok.stdout.startswith("usage: circuits "), ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-m", "circuits", "hint", "99"], capture_output=True, text=True, env=ENV)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad


def test_a_mistyped_command_is_one_short_line_with_the_closest_command(tmp_path):
    """argparse listed all twelve commands in one 190-column line; now the closest one, or none, in a line that fits."""
    from helpers import circuits_here

    typo = circuits_here(["chek", "1"], tmp_path)
    assert typo.returncode == 2, typo
    assert typo.stderr.strip() == "circuits: 'chek' is not a command: did you mean 'check'? (see circuits --help)"
    far = circuits_here(["explain"], tmp_path)
    assert far.returncode == 2 and far.stderr.strip() == "circuits: 'explain' is not a command (see circuits --help)"
    assert all(len(line) <= 80 for r in (typo, far) for line in (r.stdout + r.stderr).splitlines())
