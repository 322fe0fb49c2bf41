"""What a built model's heads do, in the terms of "A Mathematical Framework for Transformer Circuits".

Per head: the QK circuit W_QK = W_Q^T W_K and the OV circuit W_OV = W_O W_V (kept factored),
the token × token and position × position QK tables, the full OV circuit W_U W_OV W_E and its
copying score. Between heads: Q-, K- and V-composition scores beside a random baseline,
virtual heads (the path decomposition is in paths.py, the JSON summary in summary.py).
Column-vector convention throughout: rows of a QK table are queries, columns are keys;
rows of a full OV table are output tokens, columns are the attended (source) tokens.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import asdict, dataclass
from enum import StrEnum

import numpy as np

from circuits.analysis.factored import FactoredMatrix
from circuits.errors import CircuitError
from circuits.model.threads import single_blas_thread
from circuits.model.transformer import HeadWeights, Model
from circuits.model.weights import symbols_in
from circuits.targets import ov as ov_target


class Composed(StrEnum):
    """How an earlier head's output reaches a later head: through its query, key or value (Q-, K-, V-composition), or
    as a virtual head (the two OV circuits in series). Tables and JSON print the member's value."""

    Q = "Q"
    K = "K"
    V = "V"
    VIRTUAL = "virtual"


COMPOSITION_KINDS = (Composed.Q, Composed.K, Composed.V)
BASELINE_SAMPLES = 200
BASELINE_SEED = 0
MAX_TABLE = 64  # larger matrices are summarised (rank, norm) but not listed in the summary
MAX_PATHS = 256


# --- heads and their two circuits -------------------------------------------------------------
def head_name(head: HeadWeights) -> str:
    return f"{head.layer}.{head.index}"


def get_head(model: Model, ref) -> HeadWeights:
    """A head from `(layer, index)`, `"layer.index"` or a HeadWeights of this model."""
    if isinstance(ref, HeadWeights):
        return model.head(ref.layer, ref.index)
    if isinstance(ref, str):
        try:
            layer, index = (int(x) for x in ref.split("."))
        except ValueError:
            raise CircuitError(f"head {ref!r} is not of the form 'layer.index', e.g. '1.0'") from None
        return model.head(layer, index)
    if isinstance(ref, tuple) and len(ref) == 2:
        return model.head(int(ref[0]), int(ref[1]))
    raise CircuitError(f"cannot find a head from {ref!r}; give (layer, index) or 'layer.index'")


def has_qk(head: HeadWeights) -> bool:
    """False for heads with a fixed pattern: their W_Q/W_K decide nothing."""
    return head.pattern is None


def qk_circuit(head: HeadWeights) -> FactoredMatrix:  # [d_model, d_model] = W_Q^T W_K
    """The QK circuit: the attention score of query x_q on key x_k is x_q^T W_QK x_k (times the head's scale)."""
    return FactoredMatrix(head.W_Q.T, head.W_K, f"the QK circuit of head {head_name(head)}")


def ov_circuit(head: HeadWeights) -> FactoredMatrix:  # [d_model, d_model] = W_O W_V
    """The OV circuit: attending to x_k writes W_OV x_k into the residual stream."""
    return FactoredMatrix(head.W_O, head.W_V, f"the OV circuit of head {head_name(head)}")


# --- the tables a learner reads -----------------------------------------------------------------
def token_table(model: Model, head) -> np.ndarray:  # [n_vocab (query), n_vocab (key)]
    """W_E^T W_QK W_E: how much a query token attends to a key token through the embeddings alone."""
    h = get_head(model, head)
    return (model.W_E.T @ qk_circuit(h) @ model.W_E).AB


def position_table(model: Model, head) -> np.ndarray:  # [n_ctx (query), n_ctx (key)]
    """W_pos^T W_QK W_pos: how much query position i attends to key position j through W_pos alone."""
    h = get_head(model, head)
    if model.W_pos is None:
        raise CircuitError(f"the position table of head {head_name(h)} needs W_pos, and this model has none")
    return (model.W_pos.T @ qk_circuit(h) @ model.W_pos).AB


def position_peaks(table: np.ndarray) -> np.ndarray:  # [n_ctx, n_ctx] -> [n_ctx]
    """For each query position i, the key position j ≤ i it scores highest (first on ties)."""
    T = table.shape[0]
    causal = np.where(np.tril(np.ones((T, T), dtype=bool)), table, -np.inf)
    return np.argmax(causal, axis=1)


def peak_offset(table: np.ndarray) -> int | None:
    """The commonest j − i over the clear peaks of query rows i ≥ 1 (−1 for a previous-token head).

    Rows whose highest visible score is tied (an all-zero table) have no peak; None if no row has one.
    """
    peaks = position_peaks(table)
    offsets = []
    for i in range(1, len(peaks)):
        row = table[i, : i + 1]
        if np.sum(np.isclose(row, row.max(), rtol=1e-9, atol=1e-12)) == 1:
            offsets.append(int(peaks[i] - i))
    return Counter(offsets).most_common(1)[0][0] if offsets else None


def full_ov(model: Model, head) -> FactoredMatrix:  # [n_out, n_vocab]
    """W_U W_OV W_E: the logit each output token gets when the head attends to each source token, over the whole
    vocabulary and factored (targets/ov.py's full_ov is the same product, dense over a puzzle's tokens)."""
    h = get_head(model, head)
    if model.W_U is None:
        raise CircuitError(f"the full OV circuit of head {head_name(h)} needs W_U, and this model does not unembed")
    return model.W_U @ ov_circuit(h) @ model.W_E


def copying_score(model: Model, head) -> float:
    """The copying score of the head's full OV circuit (targets/ov.py's, the one the checker holds a head
    to): +1 copies tokens, −1 suppresses them, 0 for a head that writes nothing W_U reads."""
    h = get_head(model, head)
    circuit = full_ov(model, h)
    if circuit.shape[0] != circuit.shape[1]:
        raise CircuitError(
            f"the copying score of head {head_name(h)} needs a square full OV circuit; "
            f"W_U has {circuit.shape[0]} rows but the vocabulary has {circuit.shape[1]} tokens"
        )
    return ov_target.copying_score(circuit)


# --- composition between heads ----------------------------------------------------------------
@dataclass(frozen=True)
class Composition:
    """One composition score: the `later` head's Q, K or V side reading what the `earlier` head wrote."""

    kind: Composed
    earlier: str
    later: str
    score: float
    baseline: float
    baseline_std: float

    @property
    def z(self) -> float:
        """How many baseline standard deviations the score sits above the baseline mean."""
        return (self.score - self.baseline) / self.baseline_std if self.baseline_std > 0 else 0.0

    @property
    def verdict(self) -> str:
        """ "above", "near" or "below" random: beyond 3 standard deviations either way, or within them."""
        return "above" if self.z > 3 else ("below" if self.z < -3 else "near")

    def to_dict(self) -> dict:
        return {**asdict(self), "z": self.z, "verdict": self.verdict}


def composition_score(W_A: FactoredMatrix, W_B: FactoredMatrix) -> float:
    """‖W_A W_B‖_F / (‖W_A‖_F ‖W_B‖_F), NaN if either is zero."""
    denom = W_A.norm() * W_B.norm()
    return (W_A @ W_B).norm() / denom if denom > 0 else float("nan")


@functools.lru_cache(maxsize=None)
@single_blas_thread
def random_baseline(
    d_model: int, rank_a: int, rank_b: int, n_samples: int = BASELINE_SAMPLES, seed: int = BASELINE_SEED
) -> tuple[float, float]:
    """Mean and standard deviation of the composition score of random Gaussian d_model × d_model
    matrices of ranks `rank_a` and `rank_b` (fixed seed: the same numbers every run)."""
    rng = np.random.default_rng([seed, d_model, rank_a, rank_b])
    scores = []
    for _ in range(n_samples):
        W_A = FactoredMatrix(rng.normal(size=(d_model, rank_a)), rng.normal(size=(rank_a, d_model)))
        W_B = FactoredMatrix(rng.normal(size=(d_model, rank_b)), rng.normal(size=(rank_b, d_model)))
        scores.append(composition_score(W_A, W_B))
    return float(np.mean(scores)), float(np.std(scores))


def composition_matrix(kind: str, earlier: HeadWeights, later: HeadWeights) -> tuple[FactoredMatrix, FactoredMatrix]:
    """(W_A, W_B) of one composition: Q uses W_QK^T, K uses W_QK, V uses W_OV of the later head; W_B is the earlier
    W_OV."""
    if kind not in COMPOSITION_KINDS:
        raise CircuitError(f"composition kind {kind!r} is not one of Q, K, V")
    kind = Composed(kind)
    if kind is not Composed.V and not has_qk(later):
        raise CircuitError(f"head {head_name(later)} has a fixed pattern, so it has no {kind}-composition")
    if kind is Composed.V:
        return ov_circuit(later), ov_circuit(earlier)
    qk = qk_circuit(later)
    return (qk.T if kind is Composed.Q else qk), ov_circuit(earlier)


@single_blas_thread
def composition_scores(model: Model, n_samples: int = BASELINE_SAMPLES) -> list[Composition]:
    """Q-, K- and V-composition of every pair of heads in different layers, each beside its random baseline.

    Pairs where either side is zero (a head that writes nothing; a fixed-pattern head's Q/K) are left out.
    Each score is `composition_score` of `composition_matrix`, computed without forming any d_model ×
    d_model matrix: a product of factors A1 B1 A2 B2 has the Frobenius norm of R1 (B1 A2) R2ᵀ, where
    A1 = Q1 R1 and B2ᵀ = Q2 R2 (Q orthonormal), so a pair costs one [d_head, d_model] × [d_model, d_head]
    product and two d_head-sized ones. GPT-2 small's 28,512 scores take seconds, not hours.
    """
    heads = model.heads()
    cores = {id(h): _Cores(h) for h in heads}
    out = []
    for later in heads:
        earlier_heads = [h for h in heads if h.layer < later.layer]
        if not earlier_heads:
            continue
        c = cores[id(later)]
        reads = {Composed.Q: (c.k, later.W_Q), Composed.K: (c.q, later.W_K), Composed.V: (c.o, later.W_V)}  # (R1, B1)
        kinds = [k for k in COMPOSITION_KINDS if k is Composed.V or has_qk(later)]
        B1 = np.concatenate([reads[k][1] for k in kinds])  # [Σ rows, d_model]
        A2 = np.concatenate([h.W_O for h in earlier_heads], axis=1)  # [d_model, Σ d_head]
        middle = B1 @ A2  # [Σ rows, Σ d_head]: every B1 A2 at once
        rows = np.cumsum([0] + [reads[k][1].shape[0] for k in kinds])
        cols = np.cumsum([0] + [h.W_O.shape[1] for h in earlier_heads])
        for e, earlier in enumerate(earlier_heads):
            ce = cores[id(earlier)]
            for i, kind in enumerate(kinds):
                norm_a = c.norm_ov if kind is Composed.V else c.norm_qk
                denom = norm_a * ce.norm_ov
                if not denom > 0:
                    continue
                R1 = reads[kind][0]
                product = R1 @ middle[rows[i] : rows[i + 1], cols[e] : cols[e + 1]] @ ce.v.T
                score = float(np.linalg.norm(product) / denom)
                rank_a = c.rank_ov if kind is Composed.V else c.rank_qk
                mean, std = random_baseline(model.d_model, max(rank_a, 1), max(ce.rank_ov, 1), n_samples)
                out.append(Composition(kind, head_name(earlier), head_name(later), score, mean, std))
    return out


class _Cores:
    """A head's two circuits reduced to their QR cores: W_QK = W_Qᵀ W_K has the singular values of
    q kᵀ (q, k the R factors of W_Qᵀ and W_Kᵀ), and W_OV = W_O W_V those of o vᵀ."""

    def __init__(self, h: HeadWeights):
        self.q, self.k = _r(h.W_Q.T), _r(h.W_K.T)  # [≤d_head, d_head]
        self.o, self.v = _r(h.W_O), _r(h.W_V.T)
        self.norm_qk, self.rank_qk = _norm_and_rank(self.q @ self.k.T, h.W_Q.shape[1])
        self.norm_ov, self.rank_ov = _norm_and_rank(self.o @ self.v.T, h.W_V.shape[1])


def _r(A: np.ndarray) -> np.ndarray:  # [m, r] -> R [min(m, r), r], with A = Q R and ‖A X‖_F = ‖R X‖_F
    return np.linalg.qr(A, mode="r") if A.size else np.zeros((0, A.shape[1]))


def _norm_and_rank(core: np.ndarray, d_model: int) -> tuple[float, int]:
    """The Frobenius norm and the rank of a circuit from its small core (FactoredMatrix.rank's tolerance)."""
    S = np.linalg.svd(core, compute_uv=False) if core.size else np.zeros(0)
    if S.size == 0 or S[0] == 0:
        return 0.0, 0
    return float(np.sqrt(np.sum(S**2))), int(np.sum(S > S[0] * d_model * np.finfo(np.float64).eps))


# --- virtual heads -----------------------------------------------------------------------------
VIRTUAL = Composed.VIRTUAL  # the kind of a virtual-head strength in a list of compositions
VIRTUAL_MEANING = (
    "virtual: σ_max(W_OV^later W_OV^earlier) / (σ_max(W_OV^later) σ_max(W_OV^earlier));\n"
    "1 when some direction passes through both heads in full"
)


def virtual_strength(W_later: FactoredMatrix, W_earlier: FactoredMatrix) -> float:
    """σ_max(W_later W_earlier) / (σ_max(W_later) σ_max(W_earlier)), NaN if either is zero.

    1 when some direction the earlier head writes is read and moved in full by the later head:
    a virtual head, even where it uses one of many dimensions (puzzle 05), which the composition
    score, an average over all of them, cannot tell from random.
    """
    top = lambda m: m.S[0] if m.S.size else 0.0  # noqa: E731
    denom = top(W_later) * top(W_earlier)
    return float(top(W_later @ W_earlier) / denom) if denom > 0 else float("nan")


@functools.lru_cache(maxsize=None)
@single_blas_thread
def random_virtual_baseline(
    d_model: int, rank_a: int, rank_b: int, n_samples: int = BASELINE_SAMPLES, seed: int = BASELINE_SEED
) -> tuple[float, float]:
    """Mean and standard deviation of `virtual_strength` for random Gaussian matrices of these ranks."""
    rng = np.random.default_rng([seed, d_model, rank_a, rank_b, 1])
    values = [
        virtual_strength(
            FactoredMatrix(rng.normal(size=(d_model, rank_a)), rng.normal(size=(rank_a, d_model))),
            FactoredMatrix(rng.normal(size=(d_model, rank_b)), rng.normal(size=(rank_b, d_model))),
        )
        for _ in range(n_samples)
    ]
    return float(np.mean(values)), float(np.std(values))


def virtual_strengths(model: Model, n_samples: int = BASELINE_SAMPLES) -> list[Composition]:
    """The virtual-head strength of every pair of heads in different layers that write, beside its baseline."""
    out = []
    heads = model.heads()
    for earlier in heads:
        for later in heads:
            if later.layer <= earlier.layer:
                continue
            W_l, W_e = ov_circuit(later), ov_circuit(earlier)
            value = virtual_strength(W_l, W_e)
            if np.isnan(value):
                continue
            mean, std = random_virtual_baseline(model.d_model, max(W_l.rank(), 1), max(W_e.rank(), 1), n_samples)
            out.append(Composition(VIRTUAL, head_name(earlier), head_name(later), value, mean, std))
    return out


def virtual_ov(model: Model, earlier, later) -> FactoredMatrix:  # [d_model, d_model]
    """W_OV^later W_OV^earlier: what the later head moves of what the earlier head moved (seed 003, 1(d))."""
    h1, h2 = _ordered(model, earlier, later)
    return ov_circuit(h2) @ ov_circuit(h1)


def virtual_pattern(trace, earlier, later) -> np.ndarray:  # [b, query, key]
    """A^later A^earlier: where the virtual head attends on this input (two previous-token heads: two back)."""
    h1, h2 = _ordered(trace.model, earlier, later)
    return trace.pattern(h2.layer, h2.index) @ trace.pattern(h1.layer, h1.index)


def _ordered(model: Model, earlier, later) -> tuple[HeadWeights, HeadWeights]:
    h1, h2 = get_head(model, earlier), get_head(model, later)
    if h2.layer <= h1.layer:
        raise CircuitError(
            "a virtual head needs the later head in a later layer; "
            f"head {head_name(h2)} is not after head {head_name(h1)}"
        )
    return h1, h2


# --- exact (sympy) versions ------------------------------------------------------------------
def is_exact(head: HeadWeights) -> bool:
    """True when the head's weights are symbolic or simple decimals, so its products print exactly."""
    parts = [head.source.W_Q, head.source.W_K, head.source.W_V, head.source.W_O]
    if any(symbols_in(p) for p in parts if p is not None):
        return True
    return all(_short_decimals(m) for m in (head.W_Q, head.W_K, head.W_V, head.W_O))


def _short_decimals(a: np.ndarray) -> bool:
    """Entries with at most 6 decimals: `weights.exact` turns these into exact rationals."""
    return bool(np.all(np.abs(a * 1e6 - np.round(a * 1e6)) < 1e-6))


def exact_virtual_ov(model: Model, earlier, later, bind: bool = False):
    """W_OV^later W_OV^earlier as a sympy Matrix (symbols kept unless `bind`)."""
    h1, h2 = _ordered(model, earlier, later)
    return (h2.exact("W_OV", bind) * h1.exact("W_OV", bind)).expand()


def exact_composition(model: Model, kind: str, earlier, later, bind: bool = False):
    """The product inside a composition score (W_QK^T W_OV, W_QK W_OV or W_OV W_OV) as a sympy Matrix."""
    h1, h2 = _ordered(model, earlier, later)
    composition_matrix(kind, h1, h2)  # validates kind and fixed patterns
    kind = Composed(kind)
    left = h2.exact("W_OV" if kind is Composed.V else "W_QK", bind)
    left = left.T if kind is Composed.Q else left
    return (left * h1.exact("W_OV", bind)).expand()


def exact_token_table(model: Model, head, bind: bool = False):
    """W_E^T W_QK W_E as a sympy Matrix."""
    from circuits.model.weights import exact

    h = get_head(model, head)
    W_E = exact(model.W_E)
    return (W_E.T * h.exact("W_QK", bind) * W_E).expand()


def exact_full_ov(model: Model, head, bind: bool = False):
    """W_U W_OV W_E as a sympy Matrix."""
    from circuits.model.weights import exact

    h = get_head(model, head)
    full_ov(model, h)  # validates W_U
    return (exact(model.W_U) * h.exact("W_OV", bind) * exact(model.W_E)).expand()
