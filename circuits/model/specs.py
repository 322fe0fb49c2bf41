"""What a user writes: Head, LayerNorm, MLP and Layer, frozen, each checking its own context-free fields once, when
made."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from circuits.errors import CircuitError

FIXED_PATTERNS = ("previous", "self", "first", "uniform")
ACTIVATION_NAMES = ("relu", "gelu", "gelu_tanh", "gelu_new")  # functional.ACTIVATIONS' keys (a test keeps them equal)
MASKS = ("causal", "bidirectional")  # which keys a query sees: 0..i, or every position (tracr's causal=False)


def _whole(value, least: int) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= least


def check_window(window, pattern, name: str) -> None:
    """A local window is a whole number ≥ 1 that leaves every query something to attend to."""
    if window is not None and not _whole(window, 1):
        raise CircuitError(f"{name} has window = {window!r}; a local window must be a whole number ≥ 1")
    if window is not None and (pattern == "first" or (pattern == "previous" and window < 2)):
        key = "position 0" if pattern == "first" else "the previous position"
        raise CircuitError(
            f"{name} has pattern={pattern!r} with window = {window}: the window hides {key}, "
            "so some queries would attend to nothing; drop the window"
        )


def check_mask(mask, window, name: str, none: bool = True) -> None:
    """A mask is one of MASKS (or None on a Head: the model's); a local window counts back from the query only."""
    if not (mask is None and none) and mask not in MASKS:
        raise CircuitError(f"{name} has mask={mask!r}; choose one of {', '.join(map(repr, MASKS))}")
    if mask == "bidirectional" and window is not None:
        raise CircuitError(
            f"{name} has mask='bidirectional' with window = {window}; a local window is causal "
            "(key k visible iff 0 ≤ q−k < window): drop one"
        )


def check_pattern(pattern, name: str) -> None:
    if pattern is not None and not callable(pattern) and pattern not in FIXED_PATTERNS:
        raise CircuitError(
            f"{name} has pattern={pattern!r}; choose one of {', '.join(FIXED_PATTERNS)} or a function T -> [T, T]"
        )


@dataclass(eq=False, frozen=True)
class Head:
    """One attention head as the user writes it (any matrix-like values).

    `pattern` fixes the attention pattern instead of computing it from W_Q/W_K:
    "previous" (position i attends to i−1; position 0 to itself), "self",
    "first", "uniform", or a function T -> [T, T] array.
    `scale` overrides the model's attention scale; `window` makes the head local
    (key k is visible from query q iff 0 ≤ q−k < window); `mask` overrides the model's
    mask: "causal" (query i sees keys 0..i) or "bidirectional" (every key, as tracr's causal=False).
    A head without W_O writes nothing into the residual stream (its z is still traced).
    """

    W_Q: object = None
    W_K: object = None
    W_V: object = None
    W_O: object = None
    b_Q: object = None
    b_K: object = None
    b_V: object = None
    pattern: str | Callable[[int], np.ndarray] | None = None
    scale: float | None = None
    window: int | None = None
    mask: str | None = None

    def __post_init__(self):
        # Which head this is is known only inside a model, so the message says "a Head"; frozen, it stays as checked.
        check_pattern(self.pattern, "a Head")
        check_window(self.window, self.pattern, "a Head")
        check_mask(self.mask, self.window, "a Head")


def check_eps(eps, name: str) -> None:
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)) or not eps > 0:
        raise CircuitError(f"{name} has eps = {eps!r}; it must be a positive number")


def check_act(act, name: str) -> None:
    if not isinstance(act, str) or act not in ACTIVATION_NAMES:
        raise CircuitError(f"{name} has act={act!r}; choose one of {', '.join(ACTIVATION_NAMES)}")


@dataclass(eq=False, frozen=True)
class LayerNorm:
    """Pre-LayerNorm: (x − mean) / sqrt(var + eps) · w + b over d_model."""

    w: object = None
    b: object = None
    eps: float = 1e-5

    def __post_init__(self):
        check_eps(self.eps, "a LayerNorm")


@dataclass(eq=False, frozen=True)
class MLP:
    """W_out · act(W_in x + b_in) + b_out, with W_in [d_mlp, d_model] and W_out [d_model, d_mlp]."""

    W_in: object
    W_out: object
    b_in: object = None
    b_out: object = None
    act: str = "relu"

    def __post_init__(self):
        check_act(self.act, "an MLP")


@dataclass(eq=False, frozen=True)
class Layer:
    """Heads summed into the residual stream (+ b_O), then an optional MLP; optional pre-LayerNorms."""

    heads: Sequence[Head] = ()
    b_O: object = None
    mlp: MLP | None = None
    ln_attn: LayerNorm | None = None
    ln_mlp: LayerNorm | None = None


def fixed_pattern(pattern, T: int, name: str) -> np.ndarray:  # -> [T, T]
    """The [query, key] weights of a fixed pattern at length T (a user's function is checked on what it returns)."""
    if callable(pattern):
        try:
            out = np.asarray(pattern(T), dtype=np.float64)
        except Exception as e:
            raise CircuitError(f"the fixed pattern of {name} raised {type(e).__name__} for T={T}: {e}") from e
        if out.shape != (T, T):
            raise CircuitError(f"the fixed pattern of {name} returned shape {out.shape} for T={T}; it needs ({T}, {T})")
        bad = ~np.isfinite(out) | (out < 0)
        if bad.any():
            q, k = (int(i) for i in np.argwhere(bad)[0])
            raise CircuitError(
                f"the fixed pattern of {name} has {out[q, k]} at [{q}, {k}] for T={T}; "
                "attention weights must be finite and ≥ 0"
            )
        return out
    check_pattern(pattern, name)
    idx = np.arange(T)
    out = np.zeros((T, T))
    if pattern == "previous":
        out[idx, np.maximum(idx - 1, 0)] = 1.0
    elif pattern == "self":
        out[idx, idx] = 1.0
    elif pattern == "first":
        out[:, 0] = 1.0
    else:  # "uniform"
        out = np.tril(np.ones((T, T))) / (idx + 1)[:, None]
    return out
