"""benchmarks/bench.py on a tiny configuration: every section gives figures with goals and verdicts, a missed
target is reported as missed (in text and JSON), and the torch baseline computes what circuits does. No
timing is asserted: speed goals belong in the benchmark, not in tests."""

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("circuits_bench", ROOT / "benchmarks" / "bench.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["circuits_bench"] = bench  # dataclasses look their module up
_spec.loader.exec_module(bench)

TINY = {"repeats": 1, "n_batch": 60, "n_string": 4, "pytest": False, "cli": False}


def test_a_missed_target_is_reported_as_missed_in_text_and_json():
    slow = bench.Figure("one puzzle", "circuits check 8 --solution", 2.5, " s", "<=", 1.5)
    fast = bench.Figure("one puzzle", "circuits check 1 --solution", 0.9, " s", "<=", 1.5)
    many = bench.Figure("coverage", "01_consonants: random inputs", 9_999, "", ">=", 10_000.0)
    plain = bench.Figure("batching", "a figure without a goal", 3.0)
    assert (slow.met, fast.met, many.met, plain.met) == (False, True, False, None)
    text = bench.table("one puzzle", [slow, fast, many, plain])
    rows = text.splitlines()
    assert "MISSED" in rows[1] and "≤ 1.5 s" in rows[1] and "MISSED" not in rows[2] and "met" in rows[2]
    assert "MISSED" in rows[3] and rows[4].rstrip().endswith("3")
    assert "1 of 3" in bench.summary([slow, fast, many, plain]).splitlines()[0]
    assert "missed: circuits check 8" in bench.summary([slow, fast])
    data = bench.as_json([slow, fast, plain], bench.Settings.make(quick=True))
    json.dumps(data)  # serialisable as it is
    assert [f["met"] for f in data["figures"]] == [False, True, None] and (data["met"], data["judged"]) == (1, 2)
    first = data["figures"][0]
    assert (first["target"], first["measured"], first["goal"], first["op"]) == (
        "circuits check 8 --solution",
        2.5,
        1.5,
        "<=",
    )


def test_a_figure_not_measured_has_no_verdict():
    skipped = bench.Figure("forward", "circuits vs torch forward", None, "×", ">=", 1.0, "skipped: torch not installed")
    assert skipped.met is None and "skipped" in bench.table("forward", [skipped])


def test_the_quick_run_writes_every_section_as_json_within_80_columns(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert bench.main(["--quick", "--puzzle", "consonants", "--skip-torch", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert all(len(line) <= 80 for line in text.splitlines()), max(text.splitlines(), key=len)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert {"machine", "settings", "figures", "met", "judged"} <= set(data)
    assert data["machine"]["cores"] >= 1 and data["settings"]["puzzles"] == ["consonants"]
    assert data["machine"]["bytecode_kept"] is (not os.environ.get("PYTHONDONTWRITEBYTECODE"))
    assert ("PYTHONDONTWRITEBYTECODE is set" in text) is (not data["machine"]["bytecode_kept"])
    sections = {f["section"] for f in data["figures"]}
    assert sections == {"batching", "coverage"}
    for f in data["figures"]:
        assert {"target", "measured", "goal", "op", "met", "unit"} <= set(f)
        assert f["measured"] is not None and f["measured"] > 0 or "exhaustive" in f["target"]
        assert f["met"] in (True, False)
    cov = {f["target"]: f["measured"] for f in data["figures"] if f["section"] == "coverage"}
    assert cov["01_consonants: longest certified length"] == 13 and cov["01_consonants: property examples"] == 100


def test_json_to_stdout_keeps_the_report_on_stderr(capsys):
    assert bench.main(["--quick", "--puzzle", "1", "--skip-torch", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["figures"] and "targets met" in captured.err


def test_batching_compares_the_checker_at_once_and_per_string():
    [attempt] = bench.references(["consonants"])
    [fig] = bench.batching([attempt], bench.Settings(**TINY))
    assert fig.section == "batching" and fig.measured > 0 and fig.op == ">=" and fig.met in (True, False)


def test_without_torch_the_forward_section_is_skipped(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    [fig] = bench.forwards(bench.references(["1"]), bench.Settings(**TINY))
    assert fig.measured is None and fig.met is None and "torch not installed" in fig.note


@pytest.mark.parametrize(
    "name", ["consonants", "previous_token", "virtual_head", "induction_pointer", "induction_repeated"]
)
def test_the_torch_baseline_computes_what_circuits_does(name):
    pytest.importorskip("torch")
    [attempt] = bench.references([name])
    model = attempt.model()
    sample = attempt.puzzle.inputs.sample(50, seed=4)
    for part in bench.checker.by_length(sample)[:5]:
        ids, _ = model.encode([sample[i] for i in part])
        trace = model.run_ids(ids)
        want = np.concatenate([trace.resid()] + ([trace.logits] if trace.logits is not None else []), axis=-1)
        assert np.abs(bench.TorchForward(model)(ids) - want).max() <= 1e-12


def test_fresh_process_timing_reports_the_exit_code_and_what_failed():
    seconds, code, said = bench.wall([sys.executable, "-c", "raise SystemExit(3)"], repeats=1)
    assert seconds > 0 and code == 3 and said == ""
    pytest_said = "....F\n=== short test summary info ===\nFAILED tests/test_x.py::test_y - assert 0\n1 failed"
    code = f"import sys; print({pytest_said!r}); sys.exit(1)"
    _, code, said = bench.wall([sys.executable, "-c", code], repeats=1)
    assert code == 1 and said == "FAILED tests/test_x.py::test_y - assert 0"  # a failure met while timing is kept
    _, _, said = bench.wall([sys.executable, "-c", "import sys; print('a\\nb'); sys.exit(2)"], repeats=1)
    assert said == "a\nb"  # no pytest summary: the last lines


def test_the_audit_and_suite_sections_judge_against_issue_26s_goals(monkeypatch):
    [attempt] = bench.references(["uniform"])  # a small audit: a few mutants
    [audit] = bench.audits([attempt], bench.Settings(**TINY))
    assert (audit.section, audit.target, audit.op, audit.goal) == ("audit", "circuits audit 3", "<=", 15.0)
    assert audit.measured > 0 and audit.met in (True, False)
    assert re.search(r"CPU; \d+ mutants: \d+ killed, \d+ allowed, 0 survived", audit.note), audit.note
    ran = []
    said = (130.0, 1, "FAILED t.py::x")
    monkeypatch.setattr(bench, "wall", lambda cmd, repeats, cwd=bench.ROOT, first=(): ran.append((cmd, first)) or said)
    [suite, cpu] = bench.suite(bench.Settings(**TINY))
    [(cmd, first)] = ran
    assert cmd[1:3] == ["-m", "pytest"] and "puzzles/" not in cmd  # the README's `pytest`: tests/
    assert list(first) == [bench.FRESH_MACHINE]  # as on a fresh machine: the extras' tests skip
    assert (suite.section, suite.goal, suite.met) == ("test suite", 120.0, False)
    assert "exit code 1:\nFAILED t.py::x" in suite.note  # what failed while timing is kept
    assert (cpu.section, cpu.op, cpu.goal) == ("test suite", "<=", 200.0)  # issue 39: CPU apart from wall


def test_the_suite_runs_as_on_a_fresh_machine():
    """benchmarks/fresh_machine on PYTHONPATH hides every optional extra from a process and those it starts, without
    a trace in sys.modules (a test asserts the core never imported torch); numpy and circuits still import."""
    code = (
        "import importlib.util, subprocess, sys\n"
        "names = ('torch', 'transformers', 'safetensors', 'nbclient', 'distributed')\n"
        "assert all(importlib.util.find_spec(n) is None for n in names)\n"
        "assert not any(n in sys.modules for n in names)\n"
        "try:\n    import transformers\nexcept ImportError:\n    pass\nelse:\n    raise SystemExit('imported')\n"
        "import numpy, circuits\n"
        "subprocess.run([sys.executable, '-c', 'import importlib.util as u; assert u.find_spec(\"torch\") is None'],"
        " check=True)\n"
    )
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(bench.FRESH_MACHINE), str(bench.ROOT)])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_issue_39s_goals_are_judged_in_import_floors():
    """A goal in I is the measured floor times its factor: printed as `≤ 1.5 I`, the figure in I below it."""
    f = bench.Figure.within("one puzzle", "circuits check 8 --solution: wall", 2.5, 1.5, 1.3)
    assert f.goal == pytest.approx(1.95) and f.met is False and f.goal_text == "≤ 1.5 I" and "1.92 × I" in f.note
    cpu = bench.Figure.within("one puzzle", "circuits check 8 --solution: CPU", 0.9, 1.5, 1.0, cpu=True)
    assert cpu.met is True and "I's CPU" in cpu.note
    rows = bench.table("one puzzle", [f, cpu]).splitlines()
    assert "≤ 1.5 I" in rows[1] and "MISSED" in rows[1] and all(len(r) <= 80 for r in rows)


def test_save_to_verdict_is_timed_for_a_solved_and_a_failing_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "LEARNERS", tmp_path)  # no learner's file: the reference is loaded anew instead
    [attempt] = bench.references(["uniform"])
    figures = bench.verdicts([attempt], bench.Settings(**TINY, floor=1.0, floor_cpu=1.0))
    assert [f.target for f in figures] == [
        f"03_uniform: {s}: {t}" for s in ("solved", "failing") for t in ("wall", "CPU")
    ]
    assert all(f.in_floor == 0.3 and f.measured > 0 and f.met in (True, False) for f in figures)
    assert [f.note.split("; ")[-1] for f in figures] == ["solved", "solved", "failing", "failing"]
