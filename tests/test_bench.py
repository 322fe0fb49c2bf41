"""The benchmark's functions in quick mode: every figure is produced and positive, and every path
computes the same numbers. No timing is asserted: speed goals belong in the benchmark, not in tests."""

import numpy as np
import pytest

from circuits import bench


@pytest.fixture(autouse=True)
def no_rest(monkeypatch):
    monkeypatch.setattr(bench, "SETTLE", 0.0)
    monkeypatch.setattr(bench, "MIN_TIME", 0.001)


@pytest.fixture(scope="module")
def consonants():
    [(pid, attempt, model)] = bench.reference_models(["consonants"])
    return pid, attempt, model


def test_reference_models_pick_puzzles_by_name_id_or_number():
    assert [p for p, _, _ in bench.reference_models(["1"])] == ["01_consonants"]
    assert [p for p, _, _ in bench.reference_models(["05_virtual_head"])] == ["05_virtual_head"]
    ids = [p for p, _, _ in bench.reference_models()]
    assert "00_attention" not in ids and "01_consonants" in ids  # a code puzzle has no model to time


def test_puzzle_bench_times_every_path_and_they_agree(consonants):
    b = bench.bench_puzzle(*consonants, n_batch=120, n_string=12, n_token=4, repeats=1)
    paths = {"per-token loop", "per-string loop", "circuits batched"}
    assert paths <= set(b.timings)
    for t in [*b.timings.values(), b.checking]:
        assert t.seconds > 0 and t.strings > 0 and t.positions >= t.strings
        assert t.strings_per_s > 0 and t.positions_per_s > 0
    assert all(d <= 1e-12 for d in b.differences.values()), b.differences
    results = bench.puzzle_results(b)
    assert results and all(r.figure > 0 for r in results)
    assert any(r.target == "≥ 50×" for r in results)


def test_batched_and_per_string_paths_give_the_same_outputs(consonants):
    _, attempt, model = consonants
    sample = attempt.puzzle.inputs.sample(60, seed=3)
    reference = bench.batched(model, sample)
    assert [len(o) for o in reference] == [len(s) for s in sample]
    assert bench.largest_difference(bench.per_string(model, sample), reference) <= 1e-12
    assert bench.largest_difference(bench.per_token(model, sample[:10]), reference[:10]) <= 1e-12


@pytest.mark.parametrize("name", ["consonants", "virtual_head", "induction_pointer", "induction_repeated"])
def test_torch_baseline_computes_what_circuits_does(name):
    pytest.importorskip("torch")
    [(_, attempt, model)] = bench.reference_models([name])
    sample = attempt.puzzle.inputs.sample(80, seed=4)
    got = bench.torch_batched(bench.TorchForward(model), sample)
    assert bench.largest_difference(got, bench.batched(model, sample)) <= 1e-12


def test_certification_scaling_and_checks_produce_positive_figures(consonants):
    pid, attempt, model = consonants
    cert = bench.certify(pid, attempt, model, max_len=5)
    assert cert.certified and cert.classes == 2 and cert.inputs == 2 + 4 + 8 + 16 + 32 and cert.seconds > 0
    rows = bench.scaling(model, [(2, 16), (4, 32)], repeats=1)
    assert all(r.circuits > 0 and r.us_per_position > 0 for r in rows)
    [check] = bench.check_puzzles([consonants], quick=True)
    assert check.status == "solved" and check.checked > 0 and check.seconds > 0


def test_quick_run_prints_every_section(capsys):
    assert bench.main(["--quick", "--skip-pytest", "--skip-gpt2", "--puzzle", "consonants"]) == 0
    out = capsys.readouterr().out
    for heading in ("1 · Puzzle models", "3 · Certification", "4 · Cost against sequence length", "Targets"):
        assert heading in out
    assert "PASS" not in out and "MISS" not in out  # quick figures are not judged


def test_gpt2_shaped_comparison_in_quick_mode():
    pytest.importorskip("transformers")
    shape, hf32, hf64, model = bench.gpt2_models(quick=True)
    [row] = bench.bench_gpt2(hf32, hf64, model, [(2, 8)], repeats=1)
    assert row.hf32 > 0 and row.hf64 > 0 and row.circuits > 0
    assert row.difference < 1e-10
    assert np.isfinite(row.circuits / row.hf64)
