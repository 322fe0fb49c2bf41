"""Arrays taken out of a state dict by name and checked, and the model built from them, errors naming the source."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping

import numpy as np

from circuits.errors import CircuitError
from circuits.io.config import CONFIG_KEY
from circuits.model.transformer import Model
from circuits.model.vocab import Vocab
from circuits.model.weights import shape_message

# Buffers HF and TransformerLens keep in their state dicts: masks, not weights.
IGNORED_SUFFIXES = (
    ".attn.bias",
    ".attn.masked_bias",
    ".attention.bias",
    ".attention.masked_bias",
    ".attn.IGNORE",
    ".attn.mask",
)


class StateReader:
    """Takes arrays out of a state dict by name, checking shapes; says which file and key is wrong."""

    def __init__(self, state: Mapping[str, object], source: str):
        self.state, self.source, self.used = state, source, set()

    def take(self, key: str, shape: tuple) -> np.ndarray:
        if key not in self.state:
            raise CircuitError(f"{self.source}: key {key!r} is missing")
        try:
            arr = np.asarray(self.state[key])
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
            raise CircuitError(f"{self.source}: key {key!r} cannot be read ({first_line(e)})") from None
        want = tuple(a if s is None else s for s, a in zip(shape, arr.shape)) if arr.ndim == len(shape) else shape
        if arr.shape != want:
            raise CircuitError(f"{self.source}: {shape_message(f'key {key!r}', arr.shape, shape)}")
        if arr.dtype.kind not in "fiub":
            raise CircuitError(f"{self.source}: key {key!r} holds {arr.dtype} values, not numbers")
        self.used.add(key)
        with np.errstate(over="ignore", invalid="ignore"):  # said below in one line, not as a numpy warning
            out = arr.astype(np.float64, copy=False)  # the model copies it once when it is built
        if out.size and not (np.isfinite(out.min()) and np.isfinite(out.max())):  # NaN propagates through min/max
            at = tuple(int(i) for i in np.argwhere(~np.isfinite(out))[0])
            what = "a value too large for float64" if np.isfinite(arr[at]) else f"{arr[at]}"
            raise CircuitError(f"{self.source}: key {key!r} has {what} at {list(at)}; every entry must be finite")
        return out

    def finish(self, extra_ok=IGNORED_SUFFIXES) -> None:
        for key in self.state:
            if key not in self.used and key != CONFIG_KEY and not key.endswith(extra_ok):
                raise CircuitError(
                    f"{self.source}: unexpected key {key!r}; it is not part of the model its config describes"
                )


def build_model(source: str, vocab: Vocab, W_E, **kwargs) -> Model:
    """Model(vocab, W_E, **kwargs), a refusal naming `source` (the file or state dict the weights came from)."""
    try:
        return Model(vocab, W_E, **kwargs)
    except CircuitError as e:
        raise e.within(source) from None


def first_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
