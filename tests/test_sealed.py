"""The sealed verdict: a learner's file runs in a fenced child; the verdict is made where it never ran.

Each forge a learner who can write Python might try (patch the loader's copy of the puzzle, numpy's
compare, the checker, the targets; hand in circuits' own functions wrapped in a def) fails through the
real entry points (`circuits check` as circuits.cli.main runs it, watch's check, `pytest`, `pytest --junitxml`)
with the verdict its matrices earn. The protocol's faults (a child resetting its deadline, huge answers, a
segfault, the parent killed mid-check) each end within their deadline, in one line, with nothing left running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import ROOT, SOLUTIONS, circuits_here

MARK = "# ── your answer"
WRONG_01 = ("W_K = [[0, 20]]", "W_K = [[0, 5]]")  # the course's answer: wrong from 18 letters on

FORGES = {
    "the loader's copy of the puzzle, loosened": """
        import dataclasses, circuits.checking.loader as L
        for key, (names, text) in list(L._SHIPPED.items()):
            p = names["puzzle"]
            names["puzzle"] = dataclasses.replace(p, targets=[dataclasses.replace(t, tolerance=0.3)
                                                               for t in p.targets])
        """,
    "numpy's compare": """
        import numpy as np
        np.allclose = lambda *a, **k: True
        np.isclose = lambda a, b, **k: np.ones(np.broadcast(a, b).shape, bool)
        np.abs = lambda x: x * 0
        """,
    "the checker and its targets": """
        import sys
        for name, m in list(sys.modules.items()):
            if name.startswith("circuits.checking"):
                for attr in ("check", "evaluate", "cached_check", "check_alone", "worst"):
                    if hasattr(m, attr):
                        setattr(m, attr, lambda *a, **k: None)
        import circuits.checking.checker as C
        C.PuzzleResult.status = "solved"
        """,
    "every object it can reach": """
        import gc, builtins
        for o in gc.get_objects():
            if type(o).__name__ == "Attention":
                try:
                    object.__setattr__(o, "tolerance", 10.0)
                except Exception:
                    pass
        builtins.all = lambda *_: True
        """,
}


def project(root: Path, files: dict[str, str]) -> Path:
    (root / "puzzles").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / "puzzles" / name).write_text(text, encoding="utf-8")
    return root


def answered(stem: str, code: str = "", old_new: tuple[str, str] | None = None) -> str:
    """The shipped solution of `stem`, with `code` run just above its answer, and one answer line changed."""
    text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
    if old_new:
        assert old_new[0] in text
        text = text.replace(*old_new)
    i = text.index(MARK)
    import textwrap

    return text[:i] + textwrap.dedent(code) + "\n" + text[i:]


def cli(root: Path, *argv: str, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "circuits.cli", *argv],
        cwd=root,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def here(root: Path, *argv: str) -> subprocess.CompletedProcess:
    """`circuits ARGV` in `root` by this process (circuits.cli.main): for a test of the verdict, not of the process
    that asked for it; the learner's file runs in a sealed child all the same (forked from this process's warm one).
    The protocol's faults (deadlines, huge answers, a crash, a signal) keep a process of their own (cli)."""
    return circuits_here(list(argv), root)


@pytest.fixture(scope="module")
def forged(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("forged")
    for n, (name, code) in enumerate(FORGES.items()):
        project(root / f"f{n}", {"01_consonants.py": answered("01_consonants", code, WRONG_01)})
    return root


@pytest.mark.parametrize("n", range(len(FORGES)), ids=list(FORGES))
def test_a_forge_fails_circuits_check_with_its_real_verdict(forged, n):
    proc = here(forged / f"f{n}", "check", "1", "--no-cache", "--no-margins")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "(±0.1)" in proc.stdout and "solved" not in proc.stdout.splitlines()[0]
    assert "not sharp enough" in proc.stdout  # the report the matrices earn, as without the forge


@pytest.mark.parametrize("n", range(len(FORGES)), ids=list(FORGES))
def test_a_forge_fails_in_pytest_and_in_its_junit_xml(forged, n, tmp_path, pytester, monkeypatch):
    """pytest in this process (pytester's inline run): the forge runs in its sealed child all the same."""
    xml = tmp_path / "out.xml"
    monkeypatch.chdir(forged / f"f{n}")
    result = pytester.runpytest("puzzles/", "-p", "no:cacheprovider", "--no-margins", f"--junitxml={xml}", "-q")
    assert result.ret == 1, result.stdout.str()[-3000:]
    cases = ET.parse(xml).getroot().iter("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert failed, "the JUnit XML records the wrong answer as passed"


def test_a_forge_fails_in_watchs_check(forged, monkeypatch):
    from circuits.display.watch import _check

    monkeypatch.chdir(forged / "f0")
    result, line = _check(Path("puzzles/01_consonants.py"), use_cache=False)
    assert result is not None and result.status == "failing", line
    target = result.attempt.puzzle.targets[0]
    assert target.tolerance == 0.1  # the shipped statement, whatever the file did to its own copy


def test_nothing_the_file_defines_reaches_the_checker(tmp_path, monkeypatch):
    """The file patches what it can: none of it is seen here, and the answer arrives as plain numbers."""
    import numpy as np

    from circuits.checking import pipeline

    root = project(tmp_path, {"01_consonants.py": answered("01_consonants", FORGES["numpy's compare"])})
    monkeypatch.chdir(root)
    attempt = pipeline.load("puzzles/01_consonants.py")
    assert np.allclose([0.0], [1.0]) is False or not np.allclose([0.0], [1.0])
    assert type(attempt.answer.W_Q) is np.ndarray and attempt.answer.W_Q.dtype.kind in "iuf"
    assert attempt.sealed is not None and attempt.digest.startswith("sealed:")


# --- 00: the learner's own functions, called in their own process ------------------------------------------
WRAPPED = """
def attention(Q, K, V, mask=None):
    from circuits.checking import reference
    return reference.attention(Q, K, V, mask)


def causal_mask(T):
    from circuits.model import functional
    return functional.causal_mask(T)
"""


def test_00_functions_that_run_circuits_own_code_are_refused_in_one_line(tmp_path):
    text = (SOLUTIONS / "00_attention.py").read_text(encoding="utf-8")
    root = project(tmp_path, {"00_attention.py": text[: text.index(MARK)] + MARK + "\n" + WRAPPED})
    proc = here(root, "check", "0", "--no-cache")
    assert proc.returncode == 1, proc.stdout
    assert "causal_mask runs the library's own code (circuits.model.functional.causal_mask)" in proc.stdout
    assert "attention runs the library's own code" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_00_the_reference_itself_still_passes_through_the_fence(tmp_path):
    root = project(tmp_path, {"00_attention.py": (SOLUTIONS / "00_attention.py").read_text(encoding="utf-8")})
    proc = here(root, "check", "0", "--no-cache")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-1000:]


# --- the protocol: the child cannot steer it -------------------------------------------------------------
RESETS = """
import itertools, os, time
for _ in itertools.count():
    for fd in range(3, 40):
        try:
            os.write(fd, b'{"start": "01_consonants"}\\n{"fence": "forged"}\\n')
        except OSError:
            pass
    time.sleep(0.01)
"""

HUGE = {
    "ten million entries": ("import numpy as np\nW_Q = np.zeros((2, 3_000_000))\n", "W_Q"),
    "a huge exponent": ("import sympy\ns = sympy.Symbol('s')\nW_Q = [[s**(10**7), 1]]\nparams = {'s': 2}\n", "degree"),
    "a huge negative exponent": (
        "import sympy\ns = sympy.Symbol('s')\nW_Q = [[s**(-10**7), 1]]\nparams = {'s': 2}\n",
        "degree",
    ),
}


def test_a_child_that_writes_start_to_its_pipe_cannot_reset_its_deadline(tmp_path):
    root = project(tmp_path, {"01_consonants.py": answered("01_consonants", RESETS)})
    proc = cli(root, "check", "1", "--no-cache", env={"CIRCUITS_IMPORT_SECONDS": "3"}, timeout=60)
    assert proc.returncode != 0
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and "puzzles/01_consonants.py" in line, line
    assert "broke the protocol" in line or "took longer than 3 s" in line, line


@pytest.mark.parametrize("case", list(HUGE))
def test_a_huge_answer_is_one_line_naming_it(tmp_path, case):
    code, named = HUGE[case]
    text = answered("01_consonants")
    root = project(tmp_path, {"01_consonants.py": text + "\n" + code})
    proc = cli(root, "check", "1", "--no-cache", timeout=120)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stdout + proc.stderr
    out = proc.stderr.strip()
    assert len(out.splitlines()) == 1 and named in out, out


SEGFAULT = "\nimport ctypes\nctypes.string_at(0)\n"


def test_a_segfaulting_file_is_its_own_line_in_list_and_the_others_are_checked(tmp_path):
    root = project(
        tmp_path,
        {
            "01_consonants.py": answered("01_consonants") + SEGFAULT,
            "03_uniform.py": (SOLUTIONS / "03_uniform.py").read_text(encoding="utf-8"),
        },
    )
    proc = cli(root, "list", "--no-cache")
    assert "crashed (segmentation fault)" in proc.stderr, proc.stderr
    assert "03_uniform" in proc.stdout and "solved" in proc.stdout


def test_a_segfaulting_file_under_pytest_n_2_leaves_the_others_reported(tmp_path):
    pytest.importorskip("xdist")
    root = project(
        tmp_path,
        {
            "01_consonants.py": answered("01_consonants") + SEGFAULT,
            "03_uniform.py": (SOLUTIONS / "03_uniform.py").read_text(encoding="utf-8"),
        },
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "puzzles/", "-n", "2", "-p", "no:cacheprovider", "--no-margins", "-q"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "crashed (segmentation fault)" in proc.stdout, proc.stdout[-3000:]
    assert "03_uniform" in proc.stdout and "1 failed" in proc.stdout, proc.stdout[-3000:]


def _zygote_family(pid: int) -> list[int]:
    """The processes the sealed path started under `pid`: its zygote and what the zygote forked."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"child import zygote" in cmd:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_to_the_checker_mid_check_leaves_nothing_running(tmp_path):
    hang = "\nimport time\nwhile True:\n    time.sleep(0.05)\n"
    root = project(tmp_path, {"01_consonants.py": answered("01_consonants") + hang})
    before = set(_zygote_family(0))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "circuits.cli", "check", "1", "--no-cache"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while len(set(_zygote_family(0)) - before) < 2 and time.monotonic() < deadline:  # the zygote and its fork
        time.sleep(0.05)
    mine = set(_zygote_family(0)) - before
    assert len(mine) >= 2, "the learner's process never started"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while mine & set(_zygote_family(0)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not mine & set(_zygote_family(0)), "the learner's process outlived the checker"


# --- the cache: written here, keyed by the answer's data --------------------------------------------------
def test_the_cache_is_keyed_by_the_answer_not_by_what_the_file_read(tmp_path, monkeypatch):
    from circuits.checking import pipeline
    from circuits.checking.cache import cached_check

    data = tmp_path / "puzzles" / "k.txt"
    code = "import pathlib\nW_K = [[0, float(pathlib.Path(__file__).with_name('k.txt').read_text())]]\n"
    root = project(tmp_path, {"01_consonants.py": answered("01_consonants") + code})
    monkeypatch.chdir(root)
    data.write_text("20")
    first = cached_check(pipeline.load("puzzles/01_consonants.py"), margins=False)
    assert first.status == "solved"
    data.write_text("5")  # the same file, a different answer: never the cached "solved"
    again = cached_check(pipeline.load("puzzles/01_consonants.py"), margins=False)
    assert again.status == "failing" and not getattr(again, "cached", False)
    data.write_text("20")
    third = cached_check(pipeline.load("puzzles/01_consonants.py"), margins=False)
    assert third.status == "solved" and getattr(third, "cached", False)


def test_an_inf_in_one_puzzle_costs_only_that_puzzle_when_graded(tmp_path):
    from circuits.grading.grade import grade

    folder = tmp_path / "alice"
    folder.mkdir()
    (folder / "01_consonants.py").write_text(
        answered("01_consonants", "", ("W_K = [[0, 20]]", 'W_K = [[0, float("inf")]]'))
    )
    s4 = (SOLUTIONS / "04_previous_token.py").read_text(encoding="utf-8")
    (folder / "04_previous_token.py").write_text(s4 + "\nparams = {'s': float('inf')}\n")
    (folder / "03_uniform.py").write_text((SOLUTIONS / "03_uniform.py").read_text(encoding="utf-8"))
    rows = {p.puzzle: p for p in grade(folder, ["01_consonants", "03_uniform", "04_previous_token"]).puzzles}
    assert (
        rows["01_consonants"].status == "error" and "W_K of head 0.0 has inf at [0, 1]" in rows["01_consonants"].detail
    )
    assert rows["04_previous_token"].status == "error" and "'s' is bound to inf" in rows["04_previous_token"].detail
    assert rows["03_uniform"].status == "solved"


def test_a_score_divided_by_the_sharpness_reaches_the_scale_check_from_a_sealed_file(tmp_path):
    """An entry like 20/s comes back from the child as a power −1 of s (not an unreadable value), so the learner
    reads why it is refused: s cancels in every score."""
    cancel = ('    W_K[k, f"tok:{t}"] = 1\n', '    W_K[k, f"tok:{t}"] = 20 / s\n')  # s · 20/s: always 20
    root = project(tmp_path, {"09_duplicate_token.py": answered("09_duplicate_token", old_new=cancel)})
    proc = here(root, "check", "9", "--no-cache")
    out = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0 and "Traceback" not in out
    assert "W_K divides by s (entry [0, tok:a] = 20/s)" in out, out


def test_an_entry_that_is_no_polynomial_in_the_sharpness_is_named_with_why(tmp_path):
    bad = ('    W_K[k, f"tok:{t}"] = 1\n', '    W_K[k, f"tok:{t}"] = 1 / (s + 1)\n')
    root = project(tmp_path, {"09_duplicate_token.py": answered("09_duplicate_token", old_new=bad)})
    proc = here(root, "check", "9", "--no-cache")
    assert proc.returncode != 0 and "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.strip() == (
        "circuits: puzzles/09_duplicate_token.py: W_K cannot be read: entry [0, 0] is "
        "1/(s + 1), not a polynomial in s (entries must be polynomials in the symbols, or "
        "one over a power of them)"
    ), proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a killed process's warm one, as Linux ends it")
def test_a_killed_checkers_warm_process_ends_and_takes_its_folder_along():
    """The warm process (processes.Zygote) lives in a temporary folder of its own; a checker killed with SIGKILL
    cannot remove it, so the warm process does, as it ends: nothing is left in the temporary folder."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    script = (
        "import sys; from circuits.sealed import processes; z = processes.warm(); z._receive(120); "
        "print(z.scratch, flush=True); sys.stdin.read()"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    folder = Path(proc.stdout.readline().strip())
    assert folder.name.startswith("circuits-zygote-") and folder.is_dir()
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 60
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not folder.exists(), f"{folder} outlived its warm process"


ZYGOTE_JOB = """
import os, sys
import numpy, sympy, circuits  # the warm process's boot line (sealed/processes.py), then its own imports
from circuits.checking import givens, puzzle
from circuits.sealed import child, codec
child._imported_late()
before = set(sys.modules)
names = ["W_E", "W_pos", "W_Q", "W_K", "W_V", "W_O", "W_U"]
for path in sys.argv[1:]:
    item = {"stem": "x", "shown": "x.py", "file": path, "names": names, "optional": [], "code": False}
    result, _ = child.run_file(item)
    assert "error" not in result, result
print(sorted(set(sys.modules) - before))
"""


def test_the_warm_process_has_imported_what_a_job_would_import_late():
    """Each job is a fork of the warm process: a module a learner's answer pulls in on its way back (numpy.ma for
    the codec, sympy's modules at its first symbolic sum) is imported once there, not once per job."""
    files = [str(SOLUTIONS / name) for name in ("26_modular_addition.py", "09_duplicate_token.py")]
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + ZYGOTE_JOB, *files],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
