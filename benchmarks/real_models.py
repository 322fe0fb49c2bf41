"""Figures for real-model-sized work: composition scores of a GPT-2-small-shaped model.

    python benchmarks/real_models.py [--json FILE]

Random weights of GPT-2 small's shapes (12 layers × 12 heads, d_model 768, d_head 64): no download.
Prints the wall time and peak memory of every Q-, K- and V-composition score with its random baseline
(target: under 30 s and 2 GB on two cores), and checks a sample against the dense formula.
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
    return Model(Vocab.numbered(8), r(d, 8), layers=[[Head(W_Q=r(d_head, d), W_K=r(d_head, d), W_V=r(d_head, d),
                                                          W_O=r(d, d_head)) for _ in range(heads)] for _ in range(layers)])


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
    return {"scores": len(scores), "seconds": round(seconds, 2), "peak_mb": round(peak_mb),
            "max_error_vs_dense": worst, "met": seconds < TARGET_SECONDS and peak_mb < TARGET_MB}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    figures = {"composition_gpt2_small": composition_figures()}
    c = figures["composition_gpt2_small"]
    print(f"composition scores, GPT-2 small shape: {c['scores']:,} scores in {c['seconds']:.1f} s, "
          f"peak {c['peak_mb']:,} MB (target < {TARGET_SECONDS:.0f} s, < {TARGET_MB:,} MB): "
          f"{'PASS' if c['met'] else 'MISS'}; max |error| vs dense {c['max_error_vs_dense']:.1e}")
    if args.json:
        with open(args.json, "x", encoding="utf-8") as f:  # never overwrites a file
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
