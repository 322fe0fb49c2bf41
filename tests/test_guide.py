"""docs/authoring.md runs: every code block, in order, in an empty folder (files written, commands run, the
output it shows found in the real output), and the puzzle it writes is as short as it says. A `circuits` command
runs by circuits.cli.main in this process (what the console script calls), but `grade`, which starts workers, and
`pytest` run in a process of their own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import ROOT, circuits_here

GUIDE = ROOT / "docs" / "authoring.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
MARK = "# ── your answer"


def blocks() -> list[tuple[str, str]]:
    return BLOCK.findall(GUIDE.read_text(encoding="utf-8"))


def _normal(line: str) -> str:
    return re.sub(r"\(\d+(\.\d+)? s\)", "(… s)", line.rstrip())


def _command(line: str) -> list[str]:
    argv = line.split()
    if argv[0] == "circuits":
        return [sys.executable, "-m", "circuits.cli", *argv[1:]]
    assert argv[0] == "pytest", line
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]


def run_console(block: str, cwd: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "HYPOTHESIS"))},
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    lines = block.splitlines()
    for n, line in enumerate(lines):
        if not line.startswith("$ "):
            continue
        shown = []
        for out in lines[n + 1 :]:
            if out.startswith("$ "):
                break
            shown.append(out)
        argv = line[2:].split()
        if argv[0] == "circuits" and argv[1] != "grade":
            done = circuits_here(argv[1:], cwd)
        else:
            done = subprocess.run(
                _command(line[2:]), cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
            )
        assert done.returncode == 0, f"{line}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        real = [_normal(x) for x in done.stdout.splitlines()]
        for want in shown:
            assert _normal(want) in real, f"{line}: the guide shows {want!r}, the command printed:\n{done.stdout}"


def test_every_code_block_of_the_guide_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    kinds = set()
    for kind, body in blocks():
        kinds.add(kind)
        first, _, rest = body.partition("\n")
        if kind in ("python", "ini") and first.startswith("# file: "):
            name = first.removeprefix("# file: ")
            if name.endswith(", answer"):  # the solution: the puzzle file above its answer line, then this answer
                path = tmp_path / name.removesuffix(", answer")
                head = (tmp_path / "puzzles" / path.name).read_text(encoding="utf-8").split(MARK)[0]
                path.write_text(head + MARK + " ──\n" + rest, encoding="utf-8")
            else:
                (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / name).write_text(rest, encoding="utf-8")
        elif kind == "python":
            exec(compile(body, f"{GUIDE}:block", "exec"), namespace)  # noqa: S102 - the guide's own examples
        elif kind == "console":
            run_console(body, tmp_path)
        else:
            raise AssertionError(f"a {kind} block the test cannot run")
    assert kinds == {"python", "console", "ini"}


def test_the_guides_puzzle_is_as_short_as_it_says():
    text = GUIDE.read_text(encoding="utf-8")
    body = next(b for k, b in blocks() if b.startswith("# file: puzzles/"))
    below = body.split('"""', 2)[2].strip("\n").splitlines()
    assert len(below) < 40
    assert f"That is {len(below)} lines below the statement." in text
