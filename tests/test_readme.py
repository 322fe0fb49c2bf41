"""The README shows what the tool prints: its sample report is the real output of the command it names."""

import os
import re
import subprocess
import sys

from helpers import ROOT


def squashed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_the_sample_report_in_the_readme_is_what_check_prints():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```\n\$ circuits check consonants --solution\n(.*?)```", readme, flags=re.S)
    assert block, "the README no longer shows `circuits check consonants --solution`"
    run = subprocess.run(
        [sys.executable, "-m", "circuits.cli", "check", "consonants", "--solution"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            "COLUMNS": "200",
            "PATH": "",
            "PYTHONDONTWRITEBYTECODE": "1",
            **({"PYTHONPATH": str(ROOT)}),
            # the verdict cache and backups: the session's temporary folders
            **{k: os.environ[k] for k in ("XDG_CACHE_HOME", "XDG_DATA_HOME")},
        },
    )
    assert run.returncode == 0, run.stderr
    printed = re.sub(r"\n\((\d+(\.\d+)? s|solved before: .*)\)\s*$", "\n", run.stdout)  # wall time, or a cached verdict
    assert squashed(block.group(1)) == squashed(printed)
