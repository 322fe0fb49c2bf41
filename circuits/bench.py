"""The benchmark: circuits' batched forward pass beside per-string loops, torch and Hugging Face, in one process.

    python -m circuits.bench               # every section, about four minutes on two cores
    python -m circuits.bench --quick       # a smoke run of every section in about ten seconds
    python -m circuits.bench --skip-pytest --skip-gpt2 --puzzle consonants

Absolute times drift on a shared machine, so every comparison is timed side by side, the
contenders interleaved and the best of a few repeats kept, and the figures that matter are ratios.
torch and transformers are optional: their rows are skipped when they are not installed.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.model.transformer import Model, fixed_pattern

Tokens = list[str]
CHUNK = 4096  # inputs per forward pass, as the checker runs them
SETTLE = 0.2  # seconds of rest before each timing (see best_of)
MIN_TIME = 0.05  # seconds: shorter calls are timed in loops


# --- targets ---------------------------------------------------------------------------------------------
@dataclass
class Result:
    """One measured figure beside its target (`target` is None for figures reported without one)."""

    section: str
    what: str
    figure: float
    unit: str = ""
    target: str | None = None
    met: bool | None = None
    note: str = ""


@dataclass
class Timing:
    """Best wall time of one way of producing every position's output for `strings` inputs."""

    path: str
    seconds: float
    strings: int
    positions: int

    @property
    def strings_per_s(self) -> float:
        return self.strings / self.seconds

    @property
    def positions_per_s(self) -> float:
        return self.positions / self.seconds


def best_of(contenders: dict[str, Callable[[], object]], repeats: int,
            warmup: dict[str, Callable[[], object]] | None = None, settle: float | None = None) -> dict[str, float]:
    """The best wall time of one call of each contender, the contenders interleaved so that drift hits
    them alike. Each is first run once untimed (or its `warmup` instead), so that no first-call set-up
    is timed; a contender faster than MIN_TIME is timed over enough calls to take that long.
    `settle` seconds (default SETTLE) pass before each timing: OpenBLAS's and OpenMP's worker threads
    spin for a while after a call, and on a small machine they would slow down the next contender."""
    settle = SETTLE if settle is None else settle
    loops = {}
    for name, run in contenders.items():
        start = time.perf_counter()
        (warmup or {}).get(name, run)()
        took = time.perf_counter() - start
        loops[name] = 1 if name in (warmup or {}) else max(1, min(1000, int(MIN_TIME / max(took, 1e-7))))
    best = dict.fromkeys(contenders, np.inf)
    for _ in range(repeats):
        for name, run in contenders.items():
            time.sleep(settle)
            start = time.perf_counter()
            for _ in range(loops[name]):
                run()
            best[name] = min(best[name], (time.perf_counter() - start) / loops[name])
    return best


def _optional(name: str):
    try:
        return __import__(name)
    except ImportError:
        return None


# --- the three ways to run a puzzle model ------------------------------------------------------------------
def outputs(trace) -> np.ndarray:  # -> [b, T, k]
    """What every position computes: the final residual stream, each head's result z, the logits if any."""
    b, T = trace.ids.shape
    parts = [trace.resid_final] + [l.z.transpose(0, 2, 1, 3).reshape(b, T, -1) for l in trace.layers if l.z is not None]
    if trace.logits is not None:
        parts.append(trace.logits)
    return np.concatenate(parts, axis=-1)


def by_length(batch: Sequence[Tokens]) -> list[list[int]]:
    """Indices of `batch` grouped by length, each group cut into chunks of at most CHUNK."""
    groups: dict[int, list[int]] = defaultdict(list)
    for i, toks in enumerate(batch):
        groups[len(toks)].append(i)
    return [idx[s : s + CHUNK] for idx in groups.values() for s in range(0, len(idx), CHUNK)]


def batched(model: Model, batch: Sequence[Tokens]) -> list[np.ndarray]:
    """circuits as the checker runs it: one forward pass per length. -> per input [T, k]."""
    out: list[np.ndarray] = [None] * len(batch)  # type: ignore[list-item]
    for part in by_length(batch):
        o = outputs(model.run([batch[i] for i in part]))
        for row, i in enumerate(part):
            out[i] = o[row, o.shape[1] - len(batch[i]) :]
    return out


def per_string(model: Model, batch: Sequence[Tokens]) -> list[np.ndarray]:
    """The plainer learner's loop: one call per string."""
    return [outputs(model.run([toks]))[0, -len(toks) :] for toks in batch]


def per_token(model: Model, batch: Sequence[Tokens]) -> list[np.ndarray]:
    """The CS187 lab's loop: one call per prefix, keeping the prefix's last position."""
    return [np.stack([outputs(model.run([toks[: i + 1]]))[0, -1] for i in range(len(toks))]) for toks in batch]


def largest_difference(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> float:
    return max((float(np.abs(x - y).max()) for x, y in zip(a, b, strict=True)), default=0.0)


# --- the torch baseline -----------------------------------------------------------------------------------
class TorchForward:
    """A puzzle model's weights as torch tensors (float64 by default) in a small hand-written forward pass.

    It computes what `outputs` reads from a circuits Trace, and no more: attention-only where the
    model is, fixed patterns and local windows as circuits has them, inputs of one length per call.
    """

    def __init__(self, model: Model, dtype=None):
        import torch

        self.torch, self.model = torch, model
        self.dtype = dtype or torch.float64
        t = lambda a: None if a is None else torch.from_numpy(np.array(a, order="C")).to(self.dtype)  # noqa: E731
        self.W_E, self.W_pos = t(model.W_E.T), t(None if model.W_pos is None else model.W_pos.T)  # [n_vocab | n_ctx, d]
        self.W_U, self.b_U = t(model.W_U), t(model.b_U)  # [n_vocab, d]
        self.ln_final = None if model.ln_final is None else (t(model.ln_final[0]), t(model.ln_final[1]), model.ln_final[2])
        self.blocks = []
        for blk in model.blocks:
            n = len(blk.heads)
            mlp = None if blk.mlp is None else (t(blk.mlp[0]), t(blk.mlp[1]), t(blk.mlp[2]), t(blk.mlp[3]), blk.mlp[4])
            lns = [None if ln is None else (t(ln[0]), t(ln[1]), ln[2]) for ln in (blk.ln_attn, blk.ln_mlp)]
            self.blocks.append(dict(
                n=n, dk=blk.d_k, dv=blk.d_v, heads=blk.heads, W_in=t(blk.W_QKV), b_in=t(blk.b_QKV),
                W_O=t(blk.W_O_cat), scale=t(blk.scale.reshape(1, n, 1, 1)) if n else None, b_O=t(blk.b_O),
                mlp=mlp, ln_attn=lns[0], ln_mlp=lns[1]))
        self._masks: dict[tuple[int, int], tuple] = {}

    def _mask(self, i: int, T: int):  # -> visible [h, T, T], fixed [h, T, T] or None, which heads are fixed
        if (i, T) not in self._masks:
            heads, torch = self.blocks[i]["heads"], self.torch
            idx = torch.arange(T)
            causal = idx[None, :] <= idx[:, None]
            visible = torch.stack([causal & ((idx[:, None] - idx[None, :]) < h.window) if h.window else causal for h in heads])
            fixed_heads = [j for j, h in enumerate(heads) if h.pattern is not None]
            fixed = None
            if fixed_heads:
                fixed = torch.zeros((len(heads), T, T), dtype=self.dtype)
                for j in fixed_heads:
                    f = torch.from_numpy(fixed_pattern(heads[j].pattern, T, heads[j].name)).to(self.dtype)
                    f = torch.where(visible[j], f, 0.0)
                    total = f.sum(-1, keepdim=True)
                    fixed[j] = f / torch.where(total > 0, total, 1.0)
            self._masks[(i, T)] = (visible, fixed, torch.tensor([j in fixed_heads for j in range(len(heads))]))
        return self._masks[(i, T)]

    def _ln(self, x, ln):
        w, b, eps = ln
        return self.torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, eps)

    def _act(self, x, act: str):
        F = self.torch.nn.functional
        return {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda y: F.gelu(y, approximate="tanh"),
                "gelu_new": lambda y: F.gelu(y, approximate="tanh")}[act](x)

    def __call__(self, ids: np.ndarray) -> np.ndarray:  # [b, T] -> [b, T, k], as `outputs` reads a Trace
        torch = self.torch
        with torch.inference_mode():
            ids_t = torch.from_numpy(ids)
            b, T = ids.shape
            x = self.W_E[ids_t]  # [b, T, d]
            if self.W_pos is not None:
                x = x + self.W_pos[:T]
            zs = []
            for i, blk in enumerate(self.blocks):
                x, z = self._block(i, blk, x)
                if z is not None:
                    zs.append(z)
            parts = [x] + zs
            if self.W_U is not None:
                final = self._ln(x, self.ln_final) if self.ln_final else x
                logits = final @ self.W_U.T
                parts.append(logits + self.b_U if self.b_U is not None else logits)
            return torch.cat(parts, dim=-1).numpy()

    def _block(self, i: int, blk: dict, x):
        torch = self.torch
        b, T, d = x.shape
        n, dk, dv = blk["n"], blk["dk"], blk["dv"]
        z = None
        attn = torch.zeros_like(x)
        if n:
            a_in = self._ln(x, blk["ln_attn"]) if blk["ln_attn"] else x
            qkv = a_in.reshape(b * T, d) @ blk["W_in"] + blk["b_in"]  # [b·T, h·(2dk+dv)]
            q, k, v = torch.split(qkv, [n * dk, n * dk, n * dv], dim=-1)
            q = q.reshape(b, T, n, dk).transpose(1, 2)  # [b, h, T, dk]
            k = k.reshape(b, T, n, dk).transpose(1, 2)
            v = v.reshape(b, T, n, dv).transpose(1, 2)  # [b, h, T, dv]
            visible, fixed, is_fixed = self._mask(i, T)
            scores = (q @ k.transpose(-1, -2)) * blk["scale"]  # [b, h, T, T]
            pattern = torch.softmax(scores.masked_fill(~visible, -torch.inf), dim=-1)
            if fixed is not None:
                pattern = torch.where(is_fixed[:, None, None], fixed, pattern)
            zh = pattern @ v  # [b, h, T, dv]
            z = zh.transpose(1, 2).reshape(b, T, n * dv)
            attn = z @ blk["W_O"]  # [b, T, d]
        if blk["b_O"] is not None:
            attn = attn + blk["b_O"]
        x = x + attn
        if blk["mlp"] is not None:
            W_in, b_in, W_out, b_out, act = blk["mlp"]
            m_in = self._ln(x, blk["ln_mlp"]) if blk["ln_mlp"] else x
            x = x + self._act(m_in @ W_in.T + b_in, act) @ W_out.T + b_out
        return x, z


def one_thread(run: Callable[[], object]) -> Callable[[], object]:
    """`run` with torch held to one thread, as numpy's elementwise work is."""
    def single():
        import torch

        n = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return run()
        finally:
            torch.set_num_threads(n)

    return single


def torch_batched(forward: TorchForward, batch: Sequence[Tokens]) -> list[np.ndarray]:
    """The torch baseline, batched as circuits is: one call per length, the ids encoded by circuits."""
    out: list[np.ndarray] = [None] * len(batch)  # type: ignore[list-item]
    for part in by_length(batch):
        ids, _ = forward.model.encode([batch[i] for i in part])
        o = forward(ids)
        for row, i in enumerate(part):
            out[i] = o[row, o.shape[1] - len(batch[i]) :]
    return out


# --- section 1: the puzzle models ----------------------------------------------------------------------------
@dataclass
class PuzzleBench:
    puzzle: str
    timings: dict[str, Timing]
    differences: dict[str, float]  # largest |difference| of each path's outputs from the batched ones
    checking: Timing | None = None


def reference_models(names: Sequence[str] | None = None) -> list[tuple[str, object, Model]]:
    """(puzzle id, attempt, model) for every reference solution that builds a model (code puzzles have none)."""
    from circuits.checking.loader import load, puzzle_files

    out = []
    for path in puzzle_files(solutions=True):
        attempt = load(path)
        p = attempt.puzzle
        if p.build is None or p.inputs is None:
            continue
        if names and not any(n in (p.id, p.name, str(p.number)) or (n.isdigit() and int(n) == p.number) for n in names):
            continue
        out.append((p.id, attempt, attempt.model()))
    return out


def bench_puzzle(puzzle_id: str, attempt, model: Model, n_batch: int, n_string: int, n_token: int,
                 repeats: int, use_torch: bool = True) -> PuzzleBench:
    """Every path on one shared sample: the loops on its first inputs, the batched paths on all of it."""
    from circuits.checking.checker import evaluate

    sample = attempt.puzzle.inputs.sample(n_batch, seed=1)
    sizes = {"per-token loop": sample[:n_token], "per-string loop": sample[:n_string], "circuits batched": sample}
    runs = {"per-token loop": lambda: per_token(model, sizes["per-token loop"]),
            "per-string loop": lambda: per_string(model, sizes["per-string loop"]),
            "circuits batched": lambda: batched(model, sample)}
    warmup = {"per-token loop": lambda: per_token(model, sample[:2]),
              "per-string loop": lambda: per_string(model, sample[:2])}
    forward = TorchForward(model) if use_torch and _optional("torch") else None
    if forward is not None:
        runs["torch batched"] = lambda: torch_batched(forward, sample)
        runs["torch batched, 1 thread"] = one_thread(lambda: torch_batched(forward, sample))
        sizes["torch batched"] = sizes["torch batched, 1 thread"] = sample
    targets = [t for t in attempt.puzzle.targets if t.kind == "behaviour"]
    if targets:
        runs["circuits checking"] = lambda: evaluate(model, targets, sample)
        sizes["circuits checking"] = sample
    seconds = best_of(runs, repeats, warmup)
    timings = {k: Timing(k, seconds[k], len(sizes[k]), sum(map(len, sizes[k]))) for k in runs}
    reference = batched(model, sample)
    diffs = {"per-token loop": largest_difference(per_token(model, sizes["per-token loop"]), reference[:n_token]),
             "per-string loop": largest_difference(per_string(model, sizes["per-string loop"]), reference[:n_string])}
    if forward is not None:
        diffs["torch batched"] = largest_difference(torch_batched(forward, sample), reference)
    checking = timings.pop("circuits checking", None)
    return PuzzleBench(puzzle_id, timings, diffs, checking)


def puzzle_results(b: PuzzleBench) -> list[Result]:
    loop = b.timings["per-token loop"]
    out = []
    if b.checking is not None:
        x = b.checking.strings_per_s / loop.strings_per_s
        out.append(Result("puzzle models", f"{b.puzzle}: batched checking vs per-token loop", x, "×", "≥ 50×", x >= 50))
        y = b.checking.strings_per_s / b.timings["per-string loop"].strings_per_s
        out.append(Result("puzzle models", f"{b.puzzle}: batched checking vs per-string loop", y, "×"))
    if "torch batched" in b.timings:
        circuits = b.timings["circuits batched"].seconds
        x = b.timings["torch batched"].seconds / circuits
        out.append(Result("puzzle models", f"{b.puzzle}: circuits batched forward vs torch (torch time / circuits time)",
                          x, "×", "≥ 1×", x >= 1.0))
        y = b.timings["torch batched, 1 thread"].seconds / circuits
        out.append(Result("puzzle models", f"{b.puzzle}: circuits batched forward vs torch on one thread", y, "×"))
    return out


# --- section 2: the reference solutions under pytest -----------------------------------------------------------
@dataclass
class PuzzleCheck:
    puzzle: str
    status: str
    checked: int  # fewest inputs any behaviour target was checked on
    seconds: float
    margin_seconds: float


def check_puzzles(models: Sequence[tuple[str, object, Model]], quick: bool) -> list[PuzzleCheck]:
    """What the checker does per puzzle (as `pytest --solutions` runs it): inputs checked, and the time it takes."""
    from circuits.checking.checker import check
    from circuits.checking.margins import measure

    out = []
    for pid, attempt, model in models:
        kw = dict(n_random=500, property_examples=20) if quick else {}
        start = time.perf_counter()
        r = check(attempt, margins=False, **kw)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        if r.status == "solved" and not quick:
            measure(attempt, model)
        margin = time.perf_counter() - start
        checked = min((t.checked for t in r.targets if t.kind == "behaviour"), default=0)
        out.append(PuzzleCheck(pid, r.status, checked, seconds, margin))
    return out


def pytest_wall_time(root=None) -> tuple[float, str]:
    """Wall time of `pytest puzzles/ --solutions` in a fresh process, and its last line."""
    from circuits.checking.loader import _root

    root = _root(root)
    if not (root / "puzzles").is_dir():
        return float("nan"), f"no puzzles/ under {root}"
    cmd = [sys.executable, "-m", "pytest", "puzzles/", "--solutions", "-q", "-p", "no:cacheprovider"]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    return seconds, re.sub(r"\s+in [\d.]+s.*", "", last.strip("= "))


# --- section 3: certification -------------------------------------------------------------------------------
@dataclass
class Certification:
    puzzle: str
    classes: int
    inputs: int
    seconds: float
    certified: bool


def certify(puzzle_id: str, attempt, model: Model, max_len: int = 12) -> Certification | None:
    """The checker's certificate, timed end to end: find the token classes, check the targets respect them,
    and run every class pattern of length ≤ max_len. None when the tokens fall into more than two classes."""
    from circuits.checking.checker import evaluate, token_classes

    puzzle = attempt.puzzle
    targets = [t for t in puzzle.targets if t.kind == "behaviour"]
    start = time.perf_counter()
    classes = token_classes(model, list(puzzle.inputs.alphabet))
    if len(classes) != 2:
        return None
    rep = {t: c[0] for c in classes for t in c}
    respected = all(t.classes_ok(lambda s: [rep[x] for x in s], puzzle.inputs.sample(300, seed=0)) for t in targets)
    batch = list(puzzle.inputs.exhaustive([c[0] for c in classes], max_len))
    ok, _ = evaluate(model, targets, batch)
    return Certification(puzzle_id, len(classes), len(batch), time.perf_counter() - start, respected and bool(ok.all()))


# --- section 4: scaling ------------------------------------------------------------------------------------------
@dataclass
class Scale:
    batch: int
    seq: int
    circuits: float
    torch: float | None

    @property
    def us_per_position(self) -> float:
        return self.circuits / (self.batch * self.seq) * 1e6


def scaling(model: Model, shapes: Sequence[tuple[int, int]], repeats: int, use_torch: bool = True) -> list[Scale]:
    """Forward time of random ids at each (batch, seq), beside torch on the same weights."""
    forward = TorchForward(model) if use_torch and _optional("torch") else None
    rng = np.random.default_rng(0)
    out = []
    for b, T in shapes:
        ids = rng.integers(0, len(model.vocab), size=(b, T))
        runs = {"circuits": lambda: model.run_ids(ids)}
        if forward is not None:
            runs["torch"] = lambda: forward(ids)
        s = best_of(runs, repeats)
        out.append(Scale(b, T, s["circuits"], s.get("torch")))
    return out


def scaling_model(models: Sequence[tuple[str, object, Model]], longest: int):
    """The first reference model that takes inputs of `longest` tokens (no W_pos, or a long one)."""
    for pid, _, model in models:
        if model.n_ctx is None or model.n_ctx >= longest:
            return pid, model
    return None


# --- section 5: a GPT-2-small-shaped model against Hugging Face -------------------------------------------------
@dataclass
class GPT2Bench:
    batch: int
    seq: int
    hf32: float
    hf64: float
    circuits: float
    difference: float  # largest |logit difference| from HF in float64


def gpt2_models(quick: bool):
    """A random GPT-2 (12 layers, d_model 768, 12 heads; tiny in quick mode) in HF float32 and float64, and in circuits."""
    import copy

    import torch
    import transformers

    from circuits.io.hf import from_hf

    shape = dict(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=128, bos_token_id=0, eos_token_id=0) \
        if quick else dict(n_layer=12, n_embd=768, n_head=12)
    torch.manual_seed(0)
    hf32 = transformers.GPT2LMHeadModel(transformers.GPT2Config(**shape)).eval()
    hf64 = copy.deepcopy(hf32).double()
    return shape, hf32, hf64, from_hf(hf32)


def bench_gpt2(hf32, hf64, model: Model, shapes: Sequence[tuple[int, int]], repeats: int) -> list[GPT2Bench]:
    import torch

    rng = np.random.default_rng(0)
    out = []
    for b, T in shapes:
        ids = rng.integers(0, len(model.vocab), size=(b, T))
        x = torch.from_numpy(ids)

        def hf(m):
            with torch.inference_mode():
                return m(x, use_cache=False).logits

        s = best_of({"hf32": lambda: hf(hf32), "hf64": lambda: hf(hf64), "circuits": lambda: model.run_ids(ids)}, repeats)
        diff = float(np.abs(model.run_ids(ids).logits - hf(hf64).numpy()).max())
        out.append(GPT2Bench(b, T, s["hf32"], s["hf64"], s["circuits"], diff))
    return out


# --- printing ------------------------------------------------------------------------------------------------------
def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or not np.isfinite(x):
        return "—"
    if x >= 1e4:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _verdict(met: bool | None, judge: bool = True):
    from rich.text import Text

    if not judge:
        met = None
    return Text("") if met is None else Text("PASS", style="bold green") if met else Text("MISS", style="bold red")


def _table(title: str, columns: Sequence[str], caption: str | None = None):
    from rich.table import Table

    t = Table(title=title, caption=caption, title_justify="left", caption_justify="left")
    for i, c in enumerate(columns):
        t.add_column(c, justify="left" if i == 0 else "right")
    return t


def puzzle_table(benches: Sequence[PuzzleBench]):
    t = _table("1 · Puzzle models: each path on the same sample (loops on its first inputs)",
               ["puzzle / path", "inputs", "strings/s", "positions/s", "× per-token loop", "max |Δ| vs batched"],
               "per-token loop: a call per prefix, as the CS187 lab does; per-string loop: a call per string; "
               "checking: checker.evaluate (forward pass and targets); the other rows are forward passes only")
    for b in benches:
        loop = b.timings["per-token loop"].strings_per_s
        rows = [*b.timings.values()] + ([b.checking] if b.checking else [])
        for i, tm in enumerate(rows):
            diff = b.differences.get(tm.path)
            t.add_row(f"{b.puzzle if i == 0 else ''}  {tm.path}", f"{tm.strings:,}", _fmt(tm.strings_per_s),
                      _fmt(tm.positions_per_s), _fmt(tm.strings_per_s / loop), "" if diff is None else f"{diff:.1e}")
        t.add_section()
    return t


def results_table(title: str, results: Sequence[Result], caption: str | None = None, judge: bool = True):
    t = _table(title, ["figure", "measured", "target", ""], caption)
    for r in results:
        figure = f"{_fmt(r.figure)}{r.unit}" if np.isfinite(r.figure) else "not run"
        t.add_row(r.what + (f" ({r.note})" if r.note else ""), figure, r.target or "", _verdict(r.met, judge))
    return t


def check_table(checks: Sequence[PuzzleCheck], wall: float, last: str, judge: bool = True):
    t = _table("2 · Reference solutions: `pytest puzzles/ --solutions`, and the checker per puzzle in-process",
               ["puzzle", "status", "inputs checked", "check s", "inputs/s", "margins s", "≥ 10,000 inputs"],
               f"pytest wall time: {_fmt(wall)} s ({last}) on {os.cpu_count()} cores")
    for c in checks:
        t.add_row(c.puzzle, c.status, f"{c.checked:,}", f"{c.seconds:.2f}", _fmt(c.checked / c.seconds),
                  f"{c.margin_seconds:.2f}", _verdict(c.checked >= 10_000 if c.checked else None, judge))
    return t


def cert_table(certs: Sequence[Certification], max_len: int, judge: bool = True):
    t = _table(f"3 · Certification: every 2-class pattern of length ≤ {max_len}, end to end",
               ["puzzle", "classes", "sequences", "seconds", "sequences/s", "certified", "< 2 s"])
    for c in certs:
        t.add_row(c.puzzle, str(c.classes), f"{c.inputs:,}", f"{c.seconds:.3f}", _fmt(c.inputs / c.seconds),
                  "yes" if c.certified else "no", _verdict(c.seconds < 2.0, judge))
    return t


def scale_table(title: str, rows: Sequence[Scale], vary: str):
    t = _table(title, ["batch × seq", "circuits ms", "µs / position", f"× per position vs first {vary}",
                       "torch ms", "torch time / circuits time"])
    first = rows[0].us_per_position if rows else 1.0
    for r in rows:
        t.add_row(f"{r.batch} × {r.seq}", f"{r.circuits * 1e3:.2f}", f"{r.us_per_position:.3f}",
                  f"{r.us_per_position / first:.2f}", "—" if r.torch is None else f"{r.torch * 1e3:.2f}",
                  "—" if r.torch is None else f"{r.torch / r.circuits:.2f}")
    return t


def gpt2_table(rows: Sequence[GPT2Bench], shape: dict, judge: bool = True):
    t = _table(f"5 · GPT-2-shaped forward, random weights {shape}: circuits (float64) vs Hugging Face on CPU",
               ["batch × seq", "HF fp32 ms", "HF fp64 ms", "circuits ms", "circuits / HF fp64", "≤ 1.5×",
                "circuits / HF fp32", "max |Δ logits| vs HF fp64"],
               "circuits computes in float64 only, so the target is against HF in float64; "
               "HF float32 is shown for reference")
    for r in rows:
        t.add_row(f"{r.batch} × {r.seq}", f"{r.hf32 * 1e3:.0f}", f"{r.hf64 * 1e3:.0f}", f"{r.circuits * 1e3:.0f}",
                  f"{r.circuits / r.hf64:.2f}", _verdict(r.circuits / r.hf64 <= 1.5, judge), f"{r.circuits / r.hf32:.2f}",
                  f"{r.difference:.1e}")
    return t


def header() -> str:
    torch, transformers = _optional("torch"), _optional("transformers")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    parts = [f"python {platform.python_version()}", f"numpy {np.__version__}",
             f"torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else "torch not installed",
             f"transformers {transformers.__version__}" if transformers else "transformers not installed",
             f"{os.cpu_count()} cores", f"load average {load}"]
    return "circuits benchmark · " + " · ".join(parts)


# --- the run -------------------------------------------------------------------------------------------------------
@dataclass
class Settings:
    quick: bool = False
    repeats: int = 3
    n_batch: int = 10_000
    n_string: int = 1_000
    n_token: int = 200
    cert_len: int = 12
    lengths: Sequence[int] = (16, 32, 64, 128, 256, 512, 1024)
    length_batch: int = 8
    batches: Sequence[int] = (1, 8, 64, 512, 4096)
    batch_seq: int = 32
    gpt2_shapes: Sequence[tuple[int, int]] = ((1, 128), (8, 128))
    puzzles: Sequence[str] = field(default_factory=list)

    @classmethod
    def make(cls, quick: bool, puzzles: Sequence[str] = ()) -> "Settings":
        if not quick:
            return cls(puzzles=list(puzzles))
        return cls(quick=True, repeats=1, n_batch=400, n_string=40, n_token=10, cert_len=6, lengths=(16, 64),
                   length_batch=2, batches=(1, 16), batch_seq=16, gpt2_shapes=((1, 16), (2, 16)), puzzles=list(puzzles))


def run(cfg: Settings, console, skip_pytest: bool = False, skip_gpt2: bool = False, use_torch: bool = True) -> list[Result]:
    """Every section, each printed as it is measured; returns the figures measured against a target."""
    results: list[Result] = []
    models = reference_models(cfg.puzzles)
    benches = [bench_puzzle(pid, a, m, cfg.n_batch, cfg.n_string, cfg.n_token, cfg.repeats, use_torch)
               for pid, a, m in models]
    console.print(puzzle_table(benches))
    results += [r for b in benches for r in puzzle_results(b)]
    console.print(results_table("1 · Puzzle models: ratios", results, judge=not cfg.quick))

    if not skip_pytest:
        wall, last = (float("nan"), "skipped in --quick") if cfg.quick else pytest_wall_time()
        checks = check_puzzles(models, cfg.quick)
        console.print(check_table(checks, wall, last, not cfg.quick))
        fewest = min((c.checked for c in checks if c.checked), default=0)
        results += [Result("pytest", "`pytest puzzles/ --solutions` wall time", wall, " s", "< 15 s", wall < 15),
                    Result("pytest", "fewest inputs checked per puzzle", fewest, "", "≥ 10,000", fewest >= 10_000)]

    certs = [c for pid, a, m in models if (c := certify(pid, a, m, cfg.cert_len)) is not None]
    if certs:
        console.print(cert_table(certs, cfg.cert_len, not cfg.quick))
        slowest = max(c.seconds for c in certs)
        results.append(Result("certification", f"slowest certification, length ≤ {cfg.cert_len}", slowest, " s",
                              "< 2 s", slowest < 2.0 and all(c.certified for c in certs)))

    if picked := scaling_model(models, max(cfg.lengths)):
        pid, model = picked
        rows = scaling(model, [(cfg.length_batch, T) for T in cfg.lengths], cfg.repeats, use_torch)
        console.print(scale_table(f"4 · Cost against sequence length ({pid}, batch {cfg.length_batch})", rows, "length"))
        rows = scaling(model, [(b, cfg.batch_seq) for b in cfg.batches], cfg.repeats, use_torch)
        console.print(scale_table(f"4 · Cost against batch size ({pid}, seq {cfg.batch_seq})", rows, "batch"))

    if skip_gpt2:
        pass
    elif _optional("torch") is None or _optional("transformers") is None:
        console.print('5 · GPT-2-shaped forward: skipped (pip install "circuits-workbench[hf]")')
    else:
        shape, hf32, hf64, model = gpt2_models(cfg.quick)
        rows = bench_gpt2(hf32, hf64, model, cfg.gpt2_shapes, cfg.repeats)
        console.print(gpt2_table(rows, shape, not cfg.quick))
        worst = max(r.circuits / r.hf64 for r in rows)
        results.append(Result("gpt2", "GPT-2-shaped forward: circuits / HF float64 (worst shape)", worst, "×",
                              "≤ 1.5×", worst <= 1.5))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    global SETTLE, MIN_TIME
    ap = argparse.ArgumentParser(prog="python -m circuits.bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run in seconds: small samples, short lengths, a tiny GPT-2, no pytest run, no verdicts")
    ap.add_argument("--skip-pytest", action="store_true", help="skip the pytest wall time and the per-puzzle checks")
    ap.add_argument("--skip-gpt2", action="store_true", help="skip the GPT-2-shaped comparison with Hugging Face")
    ap.add_argument("--skip-torch", action="store_true", help="skip the torch baselines")
    ap.add_argument("--puzzle", action="append", default=[], help="only this puzzle (name, id or number); repeatable")
    args = ap.parse_args(argv)
    from rich.console import Console

    cfg = Settings.make(args.quick, args.puzzle)
    if cfg.quick:
        SETTLE, MIN_TIME = 0.0, 0.005
    console = Console(width=150)
    console.print(header())
    results = run(cfg, console, args.skip_pytest, args.skip_gpt2, not args.skip_torch and _optional("torch") is not None)
    if cfg.quick:
        for r in results:
            r.met = None
    met = [r.met for r in results if r.target and r.met is not None]
    caption = ("--quick: small samples and a tiny GPT-2, so no verdicts; run without --quick to judge the targets"
               if cfg.quick else f"{sum(met)} of {len(met)} targets met")
    console.print(results_table("Targets", [r for r in results if r.target], caption))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
