"""circuits/cli.py: the verbs import what they use; circuits.analysis (composition, paths, the whole summary) is
imported by the verbs that analyse, never to build the parser or to check a puzzle."""

import os
import subprocess
import sys
from pathlib import Path

import circuits

HERE = str(Path(circuits.__file__).parents[1])  # the circuits this suite tests, in the child too

ANALYSIS_LOADED = (
    "import sys\n"
    "from circuits import cli\n"
    "{run}\n"
    "print(sorted(m for m in sys.modules if m.startswith('circuits.analysis')))\n"
)


def loaded(run: str, cwd) -> str:
    """The circuits.analysis modules a fresh process holds after `run` (a fresh process: this one has them all)."""
    code = ANALYSIS_LOADED.format(run=run)
    env = {**os.environ, "PYTHONPATH": HERE}
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_checking_a_puzzle_imports_no_analysis(tmp_path):
    run = (
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    cli._parser().parse_args(['scan', '--npz', 'x.npz', '--behaviour', 'induction'])\n"
        "    cli.main(['check', '03', '--solution', '--no-margins', '--no-cache'])"
    )
    assert loaded(run, tmp_path) == "[]"


def test_analyze_imports_analysis(tmp_path):
    run = (
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    cli.main(['analyze', '03', '--solution'])"
    )
    assert "'circuits.analysis.summary'" in loaded(run, tmp_path)
