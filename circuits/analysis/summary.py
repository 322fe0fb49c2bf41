"""The whole analysis of a built model as plain JSON-serialisable data (what `circuits analyze` shows)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from circuits.analysis.composition import (
    MAX_PATHS,
    MAX_TABLE,
    composition_scores,
    copying_score,
    exact_virtual_ov,
    full_ov,
    has_qk,
    head_name,
    is_exact,
    ov_circuit,
    peak_offset,
    position_table,
    qk_circuit,
    token_table,
    virtual_ov,
    virtual_strengths,
)
from circuits.analysis.factored import FactoredMatrix
from circuits.analysis.paths import check_attention_only, path_count, path_decomposition
from circuits.errors import CircuitError
from circuits.model.transformer import HeadWeights, Model


def example_inputs(model: Model, seed: int = 0) -> list[list[str]]:
    """One random token sequence followed by its repeat (so induction heads show), fitting n_ctx."""
    tokens = [t for t in model.vocab.tokens if t != model.vocab.bos]
    room = (model.n_ctx or 16) - (1 if model.vocab.bos is not None else 0)
    half = max(1, min(8, room // 2, len(tokens)))
    rng = np.random.default_rng(seed)
    seq = [str(t) for t in rng.choice(tokens, size=half, replace=False)] if tokens else []
    return [(seq + seq)[: max(room, 1)]]


def analyze(model: Model, trace=None, inputs=None, max_table: int = MAX_TABLE) -> dict:
    """Everything above for every head, as plain JSON-serialisable data (NaN becomes None).

    The patterns come from `trace`, else from running `inputs`, else from `example_inputs(model)`.
    """
    if trace is None:
        trace = model.run(inputs if inputs is not None else example_inputs(model))
    tokens = list(model.vocab.tokens)
    summary = {
        "model": model.name,
        "d_model": model.d_model,
        "n_layers": model.n_layers,
        "n_heads": [model.n_heads(l) for l in range(model.n_layers)],
        "residual": list(model.residual.labels),
        "tokens": tokens,
        "inputs": [trace.tokens(n) for n in range(trace.batch)],
        "heads": [_head_summary(model, h, trace, max_table) for h in model.heads()],
        "composition": [c.to_dict() for c in composition_scores(model) + virtual_strengths(model)],
        "virtual_heads": _virtual_summaries(model, max_table),
        "paths": _path_summary(trace),
        "paths_into": "logits" if model.W_U is not None else "final residual",
    }
    return _plain(summary)


def _head_summary(model: Model, h: HeadWeights, trace, max_table: int) -> dict:
    labels, tokens = list(model.residual.labels), list(model.vocab.tokens)
    small = model.d_model <= max_table
    qk, ov = qk_circuit(h), ov_circuit(h)
    out = {
        "name": head_name(h),
        "layer": h.layer,
        "index": h.index,
        "scale": h.scale,
        "mask": h.mask,
        "fixed_pattern": None if h.pattern is None else (h.pattern if isinstance(h.pattern, str) else "custom"),
        "patterns": [
            trace.pattern(h.layer, h.index)[n][: len(trace.tokens(n)), : len(trace.tokens(n))]
            for n in range(trace.batch)
        ],
        "qk": _circuit_summary(qk, labels, small) if has_qk(h) else None,
        "ov": {**_circuit_summary(ov, labels, small), "eigenvalues": _complex(ov.eigenvalues())},
        "token_table": None,
        "position_table": None,
        "position_offset": None,
        "full_ov": None,
        "copying_score": None,
        "exact": None,
        "writes": h.source.W_O is not None,  # without W_O the head's result z is read directly, not written
        "W_V": None,
    }
    if not out["writes"] and small:
        out["W_V"] = _table(h.W_V, [f"v:{i}" for i in range(h.W_V.shape[0])], labels)
    if has_qk(h) and len(tokens) <= max_table:
        out["token_table"] = _table(token_table(model, h), tokens, tokens)
    if has_qk(h) and model.W_pos is not None:
        table = position_table(model, h)
        out["position_offset"] = peak_offset(table)
        if table.shape[0] <= max_table:
            positions = [str(i) for i in range(table.shape[0])]
            out["position_table"] = _table(table, positions, positions)
    if model.W_U is not None:
        circuit = full_ov(model, h)
        if max(circuit.shape) <= max_table:
            out["full_ov"] = _table(circuit.AB, _out_labels(model), tokens)
        if circuit.shape[0] == circuit.shape[1]:
            out["copying_score"] = copying_score(model, h)
    if small and is_exact(h):
        values = [f"v:{i}" for i in range(h.W_V.shape[0])]
        out["exact"] = {
            "W_QK": _exact_table(h.exact("W_QK"), labels, labels) if has_qk(h) else None,
            "W_OV": _exact_table(h.exact("W_OV"), labels, labels),
            "W_V": None if out["writes"] else _exact_table(h.exact("W_V"), values, labels),
        }
    return out


def _circuit_summary(m: FactoredMatrix, labels: list[str], dense: bool) -> dict:
    return {
        "rank": m.rank(),
        "norm": m.norm(),
        "singular_values": m.S,
        "matrix": _table(m.AB, labels, labels) if dense else None,
    }


def _virtual_summaries(model: Model, max_table: int) -> list[dict]:
    out = []
    labels = list(model.residual.labels)
    heads = model.heads()
    for h1 in heads:
        for h2 in heads:
            if h2.layer <= h1.layer:
                continue
            m = virtual_ov(model, h1, h2)
            if m.norm() == 0:
                continue
            item = {
                "earlier": head_name(h1),
                "later": head_name(h2),
                "rank": m.rank(),
                "norm": m.norm(),
                "matrix": _table(m.AB, labels, labels) if model.d_model <= max_table else None,
                "exact": None,
            }
            if model.d_model <= max_table and is_exact(h1) and is_exact(h2):
                item["exact"] = _exact_table(exact_virtual_ov(model, h1, h2), labels, labels)
            out.append(item)
    return out


def _path_summary(trace) -> dict | None:
    """Root-mean-square size of each path's logits (final residual without W_U) over real tokens;
    None where the path view does not apply."""
    try:
        check_attention_only(trace.model)
    except CircuitError:
        return None
    if path_count(trace.model) > MAX_PATHS:
        return None
    valid = trace.valid[..., None]  # [b, T, 1]
    n = max(int(valid.sum()) * (trace.logits.shape[-1] if trace.logits is not None else trace.model.d_model), 1)
    return {
        name: float(np.sqrt(np.sum(np.where(valid, part, 0.0) ** 2) / n))
        for name, part in path_decomposition(trace).items()
    }


def _out_labels(model: Model) -> list[str]:
    n_out = model.W_U.shape[0]
    return list(model.vocab.tokens) if n_out == len(model.vocab) else [str(i) for i in range(n_out)]


def _table(M: np.ndarray, rows: Sequence[str], cols: Sequence[str]) -> dict:
    return {"rows": list(rows), "cols": list(cols), "values": M}


def _exact_table(M, rows: Sequence[str], cols: Sequence[str]) -> dict:
    """The non-zero rows and columns of a sympy Matrix, entries as exact strings."""
    keep_r = [i for i in range(M.rows) if any(x != 0 for x in M.row(i))]
    keep_c = [j for j in range(M.cols) if any(x != 0 for x in M.col(j))]
    return {
        "rows": [rows[i] for i in keep_r],
        "cols": [cols[j] for j in keep_c],
        "values": [[str(M[i, j]) for j in keep_c] for i in keep_r],
    }


def _complex(lam: np.ndarray) -> list[list[float]]:
    return [[float(z.real), float(z.imag)] for z in lam]


def _plain(x):
    """Numpy and friends to plain Python for JSON; NaN and ±inf become None."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if np.isfinite(x) else None
    return x
