"""benchmarks/forward.py: its JSON holds every figure with target, measured and verdict; a miss says so; torch is
optional."""

import json
import sys

import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import forward as bench


def test_a_missed_target_is_reported_as_not_met():
    slow = bench.at_most("scaling", "8 × 1024: circuits / best", 2.0, 1.2)
    fast = bench.at_least("puzzles", "01: torch time / circuits time", 0.5, 1.0)
    assert slow.met is False and fast.met is False
    assert bench.line(slow).rstrip().endswith("MISSED") and bench.line(fast).rstrip().endswith("MISSED")
    good = bench.at_most("scaling", "x", 1.1, 1.2)
    assert good.met is True and bench.line(good).rstrip().endswith("met")
    assert bench.Figure("s", "no target", 3.0).met is None


def test_lines_fit_80_columns():
    long = bench.at_least("puzzles", "07_induction_k_composition: torch / circuits time " * 3, 12345.678, 1.0)
    assert len(bench.line(long)) <= 80 and "12,346×" in bench.line(long)
    assert len(bench.line(bench.Figure("gpt2", "8 × 1024: trace held, keep='all'", 812.3, " MiB"))) <= 80


def test_quick_run_writes_every_figure_as_json(tmp_path, capsys):
    out = tmp_path / "forward.json"
    assert bench.main(["--quick", "--skip-gpt2", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert {"python", "numpy", "cpus", "threads", "quick"} <= set(doc["machine"])
    figures = doc["figures"]
    assert {f["section"] for f in figures} == {"puzzles", "scaling"}
    for f in figures:
        assert set(f) == {"section", "what", "measured", "unit", "target", "met", "note"}
        assert (f["target"] is None) == (f["met"] is None) or f["measured"] is None
    judged = [f for f in figures if f["target"]]
    assert judged and all(isinstance(f["met"], bool) for f in judged)
    assert sum(f["what"].endswith("circuits / best of numpy, torch") for f in figures) == 2
    printed = capsys.readouterr().out
    assert all(len(line) <= 80 for line in printed.splitlines())
    assert f"of {len(judged)} targets met" in printed


def test_runs_without_torch(monkeypatch, tmp_path):
    real = bench.optional
    monkeypatch.setattr(bench, "optional", lambda name: None if name in ("torch", "transformers") else real(name))
    out = tmp_path / "forward.json"
    assert bench.main(["--quick", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())["figures"]
    assert not any("torch /" in f["what"] for f in figures)
    skipped = [f for f in figures if f["measured"] is None]
    assert {f["section"] for f in skipped} == {"puzzles", "gpt2"} and all("not installed" in f["note"] for f in skipped)
    assert all(f["note"] == "numpy" for f in figures if f["what"].endswith("best of numpy, torch"))


def test_the_plain_baselines_compute_what_circuits_computes():
    """The comparisons time the same function: the baselines' logits equal circuits' (float64, 1e-9)."""
    import numpy as np

    model = bench.scaling_model(n_ctx=64)
    ids = np.random.default_rng(0).integers(0, 26, size=(3, 40))
    want = model.run_ids(ids).logits
    np.testing.assert_allclose(bench.NumpyForward(model)(ids), want, atol=1e-9)
    if bench.optional("torch") is not None:
        np.testing.assert_allclose(bench.TorchForward(model)(ids).numpy(), want, atol=1e-9)


@pytest.mark.parametrize("pid", ["08_induction_repeated", "02_first_consonant"])
def test_the_torch_baseline_matches_on_puzzle_models(pid):
    """Fixed patterns and local windows included (puzzle 08 has a fixed previous-token head)."""
    import numpy as np

    pytest.importorskip("torch")
    attempt = dict(bench.reference_models())[pid]
    model = attempt.model()
    ids, _ = model.encode(attempt.puzzle.inputs.sample(20, seed=0)[:1] * 3)
    trace = model.run_ids(ids)
    want = trace.logits if trace.logits is not None else trace.resid_final
    np.testing.assert_allclose(bench.TorchForward(model)(ids).numpy(), want, atol=1e-9)
