"""Figures for real-model-sized work, on random weights of real shapes (nothing is downloaded).

    python benchmarks/real_models.py [--json FILE] [--skip-hf]

- composition: every Q-, K- and V-composition score of a GPT-2-small-shaped model (12 layers ×
  12 heads, d_model 768, d_head 64) with its random baseline; target under 30 s and 2 GB on two
  cores; a sample checked against the dense formula;
- parity (needs the [hf] extra): largest |circuits − Hugging Face| on attention patterns and
  logits for GPT-2 small and GPT-Neo 125M shapes at T = 128, in float64, and for GPT-Neo in both
  q·k modes (exact float64, and qk_dtype="float32" as Hugging Face computes it), also at init
  std 0.1 where q·k is large;
- float32 (needs the [hf] extra): at init std 0.1 on the GPT-Neo 125M shape, T = 128 and 512, how far
  Hugging Face's float32 model and circuits' float32 path drift from Hugging Face's float64 one, and how far
  circuits' exact q·k is from it;
- file sizes (needs the [hf] extra): a GPT-2-small-shaped model saved by circuits in float64 and
  float32, beside Hugging Face's save_pretrained;
- forward threads: a GPT-2-small-shaped forward at 8 × 128 with OpenBLAS's default threads and
  with one.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np

from circuits import Head, Model, Vocab
from circuits import analysis as A

TARGET_SECONDS, TARGET_MB = 30.0, 2048


def gpt2_small_heads(seed: int = 0, d: int = 768, d_head: int = 64, layers: int = 12, heads: int = 12) -> Model:
    rng = np.random.default_rng(seed)
    r = lambda *shape: rng.normal(0, 0.02, shape)  # noqa: E731
    return Model(
        Vocab.numbered(8),
        r(d, 8),
        layers=[
            [Head(W_Q=r(d_head, d), W_K=r(d_head, d), W_V=r(d_head, d), W_O=r(d, d_head)) for _ in range(heads)]
            for _ in range(layers)
        ],
    )


def composition_figures() -> dict:
    model = gpt2_small_heads()
    start = time.perf_counter()
    scores = A.composition_scores(model)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worst = 0.0
    for c in scores[:: max(1, len(scores) // 20)]:  # 20 spread over the list, each against the dense d_model² product
        h1, h2 = A.get_head(model, c.earlier), A.get_head(model, c.later)
        left = {"Q": h2.W_QK.T, "K": h2.W_QK, "V": h2.W_OV}[c.kind]
        dense = np.linalg.norm(left @ h1.W_OV) / (np.linalg.norm(left) * np.linalg.norm(h1.W_OV))
        worst = max(worst, abs(c.score - dense))
    return {
        "scores": len(scores),
        "seconds": round(seconds, 2),
        "peak_mb": round(peak_mb),
        "max_error_vs_dense": worst,
        "met": seconds < TARGET_SECONDS and peak_mb < TARGET_MB,
    }


def parity_figures(T: int = 128) -> dict:
    import torch
    import transformers

    from circuits.io.hf import from_hf

    def gap(hf_model, qk_dtype="float64") -> dict:
        ids = torch.randint(0, hf_model.config.vocab_size, (1, T), generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            out = hf_model(ids, output_attentions=True)
        trace = from_hf(hf_model, qk_dtype=qk_dtype).run_ids(ids.numpy())
        patterns = max(float(np.abs(t.pattern - a.numpy()).max()) for t, a in zip(trace.layers, out.attentions))
        return {"patterns": patterns, "logits": float(np.abs(trace.logits - out.logits.numpy()).max())}

    torch.manual_seed(0)
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(attn_implementation="eager")).double().eval()
    figures = {"gpt2_small_float64": gap(gpt2)}
    del gpt2
    for std in (0.02, 0.1):
        torch.manual_seed(0)
        cfg = transformers.GPTNeoConfig(
            hidden_size=768,
            num_layers=12,
            num_heads=12,
            window_size=256,
            attention_types=[[["global", "local"], 6]],
            initializer_range=std,
            attn_implementation="eager",
        )
        neo = transformers.GPTNeoForCausalLM(cfg).double().eval()
        for mode in ("float64", "float32"):
            figures[f"gpt_neo_125m_std{std}_qk_{mode}"] = gap(neo, mode)
        del neo
    return figures


def float32_figures(lengths=(128, 512), std: float = 0.1) -> dict:
    """At sharp weights (init std 0.1) on the GPT-Neo 125M shape: how far float32 patterns drift from float64,
    Hugging Face's own and circuits' (largest |difference| in any pattern entry, and in the logits), and how far
    circuits' exact q·k is from Hugging Face's float64 model (which rounds q·k to float32)."""
    import torch
    import transformers

    from circuits.io.hf import from_hf

    torch.manual_seed(0)
    cfg = transformers.GPTNeoConfig(
        hidden_size=768,
        num_layers=12,
        num_heads=12,
        window_size=256,
        attention_types=[[["global", "local"], 6]],
        initializer_range=std,
        attn_implementation="eager",
    )
    neo64 = transformers.GPTNeoForCausalLM(cfg).double().eval()
    neo32 = transformers.GPTNeoForCausalLM(cfg).eval()
    neo32.load_state_dict({k: v.float() for k, v in neo64.state_dict().items()})
    exact, fast = from_hf(neo64), from_hf(neo64, dtype="float32")

    def worst(patterns_a, patterns_b) -> float:
        return max(
            float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())
            for a, b in zip(patterns_a, patterns_b)
        )

    out = {}
    for T in lengths:
        ids = torch.randint(0, cfg.vocab_size, (1, T), generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            hf64, hf32 = neo64(ids, output_attentions=True), neo32(ids, output_attentions=True)
        ref = [a.numpy() for a in hf64.attentions]
        t_exact, t_fast = exact.run_ids(ids.numpy()), fast.run_ids(ids.numpy())
        logits = hf64.logits.numpy()
        out[f"T{T}"] = {
            "hf_float32_vs_hf_float64": {
                "patterns": worst([a.numpy() for a in hf32.attentions], ref),
                "logits": float(np.abs(hf32.logits.double().numpy() - logits).max()),
            },
            "circuits_float32_vs_hf_float64": {
                "patterns": worst([l.pattern for l in t_fast.layers], ref),
                "logits": float(np.abs(t_fast.logits - logits).max()),
            },
            "circuits_exact_vs_hf_float64": {
                "patterns": worst([l.pattern for l in t_exact.layers], ref),
                "logits": float(np.abs(t_exact.logits - logits).max()),
            },
        }
    return out


def file_size_figures() -> dict:
    """Bytes on disk of a GPT-2-small-shaped model: circuits' .safetensors in float64 and float32 (W_U stored
    untied), beside Hugging Face's own save_pretrained (float32, W_U tied to W_E)."""
    import os
    import shutil
    import tempfile

    import torch
    import transformers

    from circuits.io.export import save
    from circuits.io.hf import from_hf

    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config()).eval()
    folder = tempfile.mkdtemp()
    try:
        hf.save_pretrained(os.path.join(folder, "hf"))
        out = {
            "hf_save_pretrained": sum(
                os.path.getsize(os.path.join(folder, "hf", f)) for f in os.listdir(os.path.join(folder, "hf"))
            )
        }
        model = from_hf(hf)
        for dtype in ("float64", "float32"):
            out[f"circuits_{dtype}"] = os.path.getsize(save(model, os.path.join(folder, "m.safetensors"), dtype=dtype))
    finally:
        shutil.rmtree(folder)
    return out


def thread_figures() -> dict:
    from threadpoolctl import threadpool_limits

    from circuits import MLP, Layer, LayerNorm

    rng = np.random.default_rng(0)
    r = lambda *shape: rng.normal(0, 0.02, shape)  # noqa: E731
    d, dh, V = 768, 64, 50257
    layers = [
        Layer(
            heads=[Head(W_Q=r(dh, d), W_K=r(dh, d), W_V=r(dh, d), W_O=r(d, dh)) for _ in range(12)],
            mlp=MLP(r(4 * d, d), r(d, 4 * d), act="gelu_tanh"),
            ln_attn=LayerNorm(),
            ln_mlp=LayerNorm(),
        )
        for _ in range(12)
    ]
    model = Model(
        Vocab.numbered(V),
        r(d, V),
        r(d, 1024),
        layers=layers,
        W_U=r(V, d),
        ln_final=LayerNorm(),
        qk_multiplier="1/sqrt(d_head)",
    )
    ids = rng.integers(0, V, (8, 128))
    out = {}
    for label, limit in (("default", None), ("one", 1)):
        with threadpool_limits(limit):
            model.run_ids(ids[:1, :4])
            times = []
            for _ in range(2):
                start = time.perf_counter()
                model.run_ids(ids)
                times.append(time.perf_counter() - start)
        out[f"blas_threads_{label}_seconds"] = round(min(times), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON (never over an existing file)")
    parser.add_argument("--skip-hf", action="store_true", help="leave out the parity figures (no torch needed)")
    args = parser.parse_args()
    figures = {"composition_gpt2_small": composition_figures()}
    c = figures["composition_gpt2_small"]
    print(
        f"composition scores, GPT-2 small shape: {c['scores']:,} scores in {c['seconds']:.1f} s, "
        f"peak {c['peak_mb']:,} MB (target < {TARGET_SECONDS:.0f} s, < {TARGET_MB:,} MB): "
        f"{'PASS' if c['met'] else 'MISS'}; max |error| vs dense {c['max_error_vs_dense']:.1e}"
    )
    figures["forward_gpt2_small_8x128"] = t = thread_figures()
    print(
        f"forward, GPT-2 small shape, 8 × 128 tokens: {t['blas_threads_default_seconds']:.2f} s with OpenBLAS's "
        f"default threads, {t['blas_threads_one_seconds']:.2f} s with one"
    )
    if not args.skip_hf:
        figures["parity_T128"] = p = parity_figures()
        for name, gap in p.items():
            print(f"parity {name:<30} patterns {gap['patterns']:.1e}  logits {gap['logits']:.1e}")
        figures["file_bytes_gpt2_small"] = sizes = file_size_figures()
        print("GPT-2 small on disk: " + ", ".join(f"{k} {v / 1e9:.2f} GB" for k, v in sizes.items()))
        figures["float32_std0.1"] = f32 = float32_figures()
        for T, rows in f32.items():
            for name, gap in rows.items():
                print(f"GPT-Neo std 0.1, {T}: {name:<32} patterns {gap['patterns']:.2g}  logits {gap['logits']:.2g}")
    if args.json:
        with open(args.json, "x", encoding="utf-8") as f:  # never overwrites a file
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
