"""The forward pass's speed beside plain torch, plain numpy and Hugging Face, on random or reference weights.

    python benchmarks/forward.py [--quick] [--json FILE] [--repeats N] [--skip-gpt2]

Sections (issue 15's forward targets):
- puzzles: every reference solution's model on the checker's shapes (4096 sampled inputs, one
  call per length) beside the same forward in plain torch, both on two threads; target ≥ 1×;
- scaling: a puzzle-sized model at batch × seq up to 8 × 1024 beside the better of plain torch
  and a plain numpy forward (picoGPT's, without trace or checks); target circuits ≤ 1.2 × best;
- gpt2: a GPT-2-small-shaped model (random weights, nothing downloaded) in circuits' float32
  path, keep=(), beside Hugging Face float32; target ≤ 1.2 ×; with its logit parity against HF
  float64 (stated tolerance FLOAT32_TOLERANCE) and the memory a trace holds with keep="all" and ().
Times are the minimum of `--repeats` runs, contenders interleaved. torch and transformers are
optional: their comparisons are skipped (and said so) when they are not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from circuits import MLP, Head, Layer, LayerNorm, Model, Vocab
from circuits.model.specs import fixed_pattern

FLOAT32_TOLERANCE = 1e-3  # |logit| difference of the float32 path from float64 HF, GPT-2 small at init (README)
CHUNK = 4096  # inputs per puzzle sample, as the checker runs them
THREADS = 2


@dataclass
class Figure:
    """One measured figure; `target` and `met` are None for figures reported without a target."""

    section: str
    what: str
    measured: float | None
    unit: str = ""
    target: str | None = None
    met: bool | None = None
    note: str = ""


def at_least(section, what, measured, bound, unit="×", note="") -> Figure:
    ok = None if measured is None else bool(measured >= bound)
    return Figure(section, what, measured, unit, f"≥ {bound:g}{unit}", ok, note)


def at_most(section, what, measured, bound, unit="×", note="") -> Figure:
    ok = None if measured is None else bool(measured <= bound)
    return Figure(section, what, measured, unit, f"≤ {bound:g}{unit}", ok, note)


def best_of(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Minimum wall time of each run over `repeats` rounds, the runs interleaved within a round."""
    best = dict.fromkeys(runs, float("inf"))
    for f in runs.values():
        f()  # warm up caches and lazy imports
    for _ in range(repeats):
        for name, f in runs.items():
            start = time.perf_counter()
            f()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def optional(name: str):
    try:
        return __import__(name)
    except ImportError:
        return None


# --- baselines: the same forward, plainly -------------------------------------------------------------
def _layers(model: Model):
    """Per layer: (heads, W_QKV, b_QKV, W_O_cat, scale, b_O, mlp, ln_attn, ln_mlp, d_k, d_v) as numpy float64."""
    return [
        (b.heads, b.W_QKV, b.b_QKV, b.W_O_cat, b.scale, b.b_O, b.mlp, b.ln_attn, b.ln_mlp, b.d_k, b.d_v)
        for b in model.blocks
    ]


def _fixed(heads, T: int, visible: np.ndarray) -> np.ndarray | None:  # [h, T, T] with NaN for computed heads
    if all(h.pattern is None for h in heads):
        return None
    out = np.full(visible.shape, np.nan)
    for i, h in enumerate(heads):
        if h.pattern is not None:
            p = np.where(visible[i], fixed_pattern(h.pattern, T, h.name), 0.0)
            out[i] = p / np.maximum(p.sum(-1, keepdims=True), 1e-300)
    return out


def _mask(heads, T: int) -> np.ndarray:  # [h, T, T]
    q, k = np.arange(T)[:, None], np.arange(T)[None, :]
    return np.stack([(k <= q) & ((q - k) < (h.window or T + 1)) for h in heads])


class NumpyForward:
    """picoGPT's forward on the model's weights: no trace, no checks, one length per call."""

    def __init__(self, model: Model):
        self.model, self.layers = model, _layers(model)
        self.W_E, self.W_pos = model.W_E.T, None if model.W_pos is None else model.W_pos.T

    def __call__(self, ids: np.ndarray) -> np.ndarray:  # [b, T] -> [b, T, d_model or n_vocab]
        b, T = ids.shape
        x = self.W_E[ids] + (self.W_pos[:T] if self.W_pos is not None else 0.0)  # [b, T, d]
        d = x.shape[-1]
        for heads, W, bias, W_O, scale, b_O, mlp, ln1, ln2, dk, dv in self.layers:
            n = len(heads)
            if n:
                a = _ln(x, ln1) if ln1 else x
                q, k, v = np.split(a.reshape(b * T, d) @ W + bias, [n * dk, 2 * n * dk], axis=-1)
                q, k, v = (t.reshape(b, T, n, -1).transpose(0, 2, 1, 3) for t in (q, k, v))  # [b, h, T, ·]
                visible = _mask(heads, T)
                s = np.where(visible, q @ k.transpose(0, 1, 3, 2) * scale[:, None, None], -np.inf)
                e = np.exp(s - s.max(-1, keepdims=True))
                p = e / e.sum(-1, keepdims=True)
                fixed = _fixed(heads, T, visible)
                if fixed is not None:
                    p = np.where(np.isnan(fixed), p, fixed)
                x = x + ((p @ v).transpose(0, 2, 1, 3).reshape(b * T, n * dv) @ W_O).reshape(b, T, d)
            if b_O is not None:
                x = x + b_O
            if mlp is not None:
                m = _ln(x, ln2) if ln2 else x
                h = m @ mlp.W_in.T + mlp.b_in
                h = (
                    np.maximum(h, 0)
                    if mlp.act == "relu"
                    else 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))
                )
                x = x + h @ mlp.W_out.T + mlp.b_out
        if self.model.W_U is None:
            return x
        x = _ln(x, self.model.ln_final) if self.model.ln_final else x
        return x @ self.model.W_U.T


def _ln(x, ln):
    m = x - x.mean(-1, keepdims=True)
    return m / np.sqrt((m * m).mean(-1, keepdims=True) + ln.eps) * ln.w + ln.b


class TorchForward:
    """The same forward in plain torch (float64), one length per call."""

    def __init__(self, model: Model):
        import torch

        self.torch, self.model = torch, model

        def t(a):
            return None if a is None else torch.from_numpy(np.array(a))

        self.W_E, self.W_pos = t(model.W_E.T), t(None if model.W_pos is None else model.W_pos.T)
        self.W_U = t(model.W_U)
        self.ln_final = None if model.ln_final is None else tuple(map(t, model.ln_final[:2])) + (model.ln_final.eps,)
        self.layers = []
        for heads, W, bias, W_O, scale, b_O, mlp, ln1, ln2, dk, dv in _layers(model):
            self.layers.append(
                (
                    heads,
                    t(W),
                    t(bias),
                    t(W_O),
                    t(scale.reshape(-1, 1, 1)),
                    t(b_O),
                    None if mlp is None else (*map(t, mlp[:4]), mlp.act),
                    None if ln1 is None else (t(ln1.w), t(ln1.b), ln1.eps),
                    None if ln2 is None else (t(ln2.w), t(ln2.b), ln2.eps),
                    dk,
                    dv,
                )
            )
        self.masks: dict = {}

    def _mask(self, i: int, heads, T: int):
        if (i, T) not in self.masks:
            visible = _mask(heads, T)
            fixed = _fixed(heads, T, visible)
            self.masks[(i, T)] = (
                self.torch.from_numpy(visible),
                None if fixed is None else self.torch.from_numpy(fixed),
            )
        return self.masks[(i, T)]

    def __call__(self, ids: np.ndarray):
        torch = self.torch
        F = torch.nn.functional
        with torch.inference_mode():
            b, T = ids.shape
            x = self.W_E[torch.from_numpy(ids)]
            if self.W_pos is not None:
                x = x + self.W_pos[:T]
            for i, (heads, W, bias, W_O, scale, b_O, mlp, ln1, ln2, dk, dv) in enumerate(self.layers):
                n = len(heads)
                if n:
                    a = F.layer_norm(x, x.shape[-1:], ln1[0], ln1[1], ln1[2]) if ln1 else x
                    q, k, v = torch.split(a @ W + bias, [n * dk, n * dk, n * dv], dim=-1)
                    q, k, v = (t.reshape(b, T, n, -1).transpose(1, 2) for t in (q, k, v))
                    visible, fixed = self._mask(i, heads, T)
                    p = torch.softmax((q @ k.transpose(-1, -2) * scale).masked_fill(~visible, -torch.inf), dim=-1)
                    if fixed is not None:
                        p = torch.where(torch.isnan(fixed), p, fixed)
                    x = x + (p @ v).transpose(1, 2).reshape(b, T, n * dv) @ W_O
                if b_O is not None:
                    x = x + b_O
                if mlp is not None:
                    m = F.layer_norm(x, x.shape[-1:], ln2[0], ln2[1], ln2[2]) if ln2 else x
                    h = m @ mlp[0].T + mlp[1]
                    h = F.relu(h) if mlp[4] == "relu" else F.gelu(h, approximate="tanh")
                    x = x + h @ mlp[2].T + mlp[3]
            if self.W_U is not None:
                x = F.layer_norm(x, x.shape[-1:], *self.ln_final[:2], self.ln_final[2]) if self.ln_final else x
                x = x @ self.W_U.T
            return x


# --- section 1: puzzle models at the checker's shapes ---------------------------------------------------
def reference_models() -> list[tuple[str, object]]:
    from circuits.checking.loader import load, puzzle_files

    out = []
    for path in puzzle_files(solutions=True):
        attempt = load(path)
        if attempt.puzzle.build is not None and attempt.puzzle.inputs is not None:
            out.append((attempt.puzzle.id, attempt))
    return out


def puzzle_figures(n_inputs: int, repeats: int, torch) -> list[Figure]:
    out = []
    for pid, attempt in reference_models():
        model = attempt.model()
        sample = attempt.puzzle.inputs.sample(n_inputs, seed=1)
        groups = {}
        for toks in sample:
            groups.setdefault(len(toks), []).append(toks)
        batches = [model.encode(g)[0] for g in groups.values()]  # [b, T] per length
        runs = {"circuits": lambda model=model, batches=batches: [model.run_ids(ids) for ids in batches]}
        if torch is not None:
            forward = TorchForward(model)
            runs["torch"] = lambda forward=forward, batches=batches: [forward(ids) for ids in batches]
        s = best_of(runs, repeats)
        out.append(Figure("puzzles", f"{pid}: circuits, {n_inputs} inputs", s["circuits"] * 1e3, " ms"))
        if torch is not None:
            ratio = s["torch"] / s["circuits"]
            out.append(at_least("puzzles", f"{pid}: torch / circuits time", ratio, 1.0))
    return out


# --- section 2: batch × seq up to 8 × 1024 ------------------------------------------------------------------
def scaling_model(seed: int = 0, d: int = 32, n_vocab: int = 26, n_ctx: int = 1024) -> Model:
    """Puzzle-sized but long: two layers of two heads and an MLP, LayerNorms, n_ctx 1024."""
    rng = np.random.default_rng(seed)

    def r(*shape):
        return rng.normal(0, 0.3, shape)

    def layer():
        return Layer(
            heads=[Head(W_Q=r(8, d), W_K=r(8, d), W_V=r(8, d), W_O=r(d, 8)) for _ in range(2)],
            b_O=r(d),
            mlp=MLP(W_in=r(4 * d, d), W_out=r(d, 4 * d), act="relu"),
            ln_attn=LayerNorm(),
            ln_mlp=LayerNorm(),
        )

    return Model(
        Vocab.chars_of("abcdefghijklmnopqrstuvwxyz"[:n_vocab]),
        r(d, n_vocab),
        W_pos=r(d, n_ctx),
        layers=[layer(), layer()],
        W_U=r(n_vocab, d),
        ln_final=LayerNorm(),
    )


def scaling_figures(shapes, repeats: int, torch) -> list[Figure]:
    model = scaling_model(n_ctx=max(T for _, T in shapes))
    plain = NumpyForward(model)
    forward = TorchForward(model) if torch is not None else None
    rng = np.random.default_rng(0)
    out = []
    for b, T in shapes:
        ids = rng.integers(0, len(model.vocab), size=(b, T))
        runs = {"circuits": lambda ids=ids: model.run_ids(ids), "numpy": lambda ids=ids: plain(ids)}
        if forward is not None:
            runs["torch"] = lambda ids=ids: forward(ids)
        s = best_of(runs, repeats)
        best = min(v for k, v in s.items() if k != "circuits")
        out.append(Figure("scaling", f"{b} × {T}: circuits forward", s["circuits"] * 1e3, " ms"))
        which = "numpy" if best == s["numpy"] else "torch"
        out.append(
            at_most("scaling", f"{b} × {T}: circuits / best of numpy, torch", s["circuits"] / best, 1.2, note=which)
        )
    return out


# --- section 3: GPT-2-small-shaped, float32, beside Hugging Face --------------------------------------------
def gpt2_figures(shapes, repeats: int, quick: bool) -> list[Figure]:
    import torch
    import transformers

    from circuits.io.hf import from_hf

    shape = {"n_layer": 12, "n_embd": 768, "n_head": 12}
    if quick:
        shape = {
            "n_layer": 2,
            "n_embd": 64,
            "n_head": 4,
            "vocab_size": 512,
            "n_positions": 256,
            "bos_token_id": 0,
            "eos_token_id": 0,
        }
    torch.manual_seed(0)
    hf32 = transformers.GPT2LMHeadModel(transformers.GPT2Config(**shape, attn_implementation="eager")).eval()
    model32 = from_hf(hf32, dtype="float32")
    rng = np.random.default_rng(0)
    out = []
    for b, T in shapes:
        ids = rng.integers(0, shape.get("vocab_size", 50257), size=(b, T))
        x = torch.from_numpy(ids)

        def hf(x=x):
            with torch.inference_mode():
                return hf32(x, use_cache=False).logits

        s = best_of({"hf32": hf, "circuits": lambda ids=ids: model32.run_ids(ids, keep=())}, repeats)
        out.append(Figure("gpt2", f"{b} × {T}: HF float32 forward", s["hf32"] * 1e3, " ms"))
        out.append(Figure("gpt2", f"{b} × {T}: circuits float32 forward", s["circuits"] * 1e3, " ms"))
        out.append(at_most("gpt2", f"{b} × {T}: circuits float32 / HF float32", s["circuits"] / s["hf32"], 1.2))
    b, T = shapes[0]
    ids = rng.integers(0, shape.get("vocab_size", 50257), size=(b, T))
    with torch.inference_mode():
        want = hf32.double()(torch.from_numpy(ids), use_cache=False).logits.numpy()
    hf32.float()
    diff = float(np.abs(model32.run_ids(ids, keep=()).logits - want).max())
    out.append(at_most("gpt2", f"{b} × {T}: max |logit − HF float64|, float32 path", diff, FLOAT32_TOLERANCE, ""))
    full, lean = (trace_bytes(model32.run_ids(ids, keep=k)) / 2**20 for k in ("all", ()))
    out.append(Figure("gpt2", f"{b} × {T}: trace held, keep='all'", full, " MiB"))
    out.append(Figure("gpt2", f"{b} × {T}: trace held, keep=()", lean, " MiB"))
    return out


def trace_bytes(trace) -> int:
    """Bytes of the arrays a trace holds (views of one another counted once)."""
    seen, total = set(), 0
    arrays = [trace.embed, trace.resid_final, trace.final, trace.logits] + [
        getattr(layer, k) for layer in trace.layers for k in vars(layer) if k != "heads"
    ]
    for a in arrays:
        if isinstance(a, np.ndarray):
            base = a if a.base is None else a.base
            if id(base) not in seen and isinstance(base, np.ndarray):
                seen.add(id(base))
                total += base.nbytes
    return total


# --- printing and the command -----------------------------------------------------------------------------
def line(f: Figure) -> str:
    """One figure in at most 80 columns: what, measured, target, verdict."""
    if f.measured is None:
        value = "skipped"
    else:
        value = (f"{f.measured:,.0f}" if abs(f.measured) >= 1000 else f"{f.measured:.3g}") + f.unit
    verdict = "" if f.met is None else ("met" if f.met else "MISSED")
    what = f.what + (f" ({f.note})" if f.note else "")
    room = 80 - 2 - 11 - 9 - 7
    if len(what) > room:
        what = what[: room - 1] + "…"
    return f"  {what:<{room}}{value:>11}{f.target or '':>9}{verdict:>7}"


def run(args) -> list[Figure]:
    torch = optional("torch")
    if torch is not None:
        torch.set_num_threads(THREADS)
    out: list[Figure] = []
    n_inputs, repeats = (256, 1) if args.quick else (CHUNK, args.repeats)
    out += puzzle_figures(n_inputs, repeats, torch)
    if torch is None:
        out.append(Figure("puzzles", "torch comparisons", None, note="torch is not installed"))
    shapes = [(1, 64), (8, 64)] if args.quick else [(64, 16), (1, 1024), (8, 128), (8, 1024)]
    out += scaling_figures(shapes, repeats, torch)
    if args.skip_gpt2:
        pass
    elif torch is None or optional("transformers") is None:
        out.append(Figure("gpt2", "HF comparison", None, note="torch and transformers are not installed"))
    else:
        out += gpt2_figures([(1, 32)] if args.quick else [(1, 128), (4, 256)], repeats, args.quick)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny shapes, one repeat: a smoke run in seconds")
    ap.add_argument("--json", metavar="FILE", help="write every figure with its target and verdict as JSON")
    ap.add_argument("--repeats", type=int, default=5, help="timings are the minimum of this many runs (default 5)")
    ap.add_argument("--skip-gpt2", action="store_true", help="skip the GPT-2-shaped comparison")
    args = ap.parse_args(argv)
    figures = run(args)
    section = None
    for f in figures:
        if f.section != section:
            section = f.section
            print(section)
        print(line(f))
    judged = [f for f in figures if f.met is not None]
    print(
        f"{sum(f.met for f in judged)} of {len(judged)} targets met"
        + (" (--quick: small shapes, not a verdict)" if args.quick else "")
    )
    if args.json:
        doc = {
            "machine": {
                "python": sys.version.split()[0],
                "numpy": np.__version__,
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "threads": THREADS,
                "quick": args.quick,
                "repeats": args.repeats,
            },
            "figures": [asdict(f) for f in figures],
        }
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
