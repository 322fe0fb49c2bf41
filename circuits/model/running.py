"""A built Model's forward pass: inputs encoded to token ids, run through the blocks, and run again with an edit.

`Running` is the half of Model that runs it (transformer.py builds it); it reads the built weights the
constructor left on the model (`_W_E_rows`, `_run_blocks`, `_ln_final`, …) and never changes them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from circuits.errors import CircuitError
from circuits.model import functional as F
from circuits.model.forward import transformer_block
from circuits.model.trace import Trace, check_keep


class Running:
    """Encoding and the forward pass of a Model (its weights built by Model.__init__)."""

    def encode(self, inputs, add_bos: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Inputs (a string, a list of strings or token lists, or an int array) -> ids [b, T], valid [b, T]."""
        if isinstance(inputs, np.ndarray) and inputs.dtype.kind not in "iu":
            if inputs.dtype.kind not in "UO":
                raise CircuitError(f"token ids must be integers; got an array of {inputs.dtype}")
            inputs = inputs.tolist()  # an array of strings or token lists: read it as the list it holds
        if isinstance(inputs, np.ndarray) and inputs.dtype.kind in "iu":
            ids = self._checked_ids(inputs[None] if inputs.ndim == 1 else inputs)
            return ids, np.ones(ids.shape, dtype=bool)
        if isinstance(inputs, str) or (
            isinstance(inputs, Sequence) and inputs and not isinstance(inputs[0], (str, Sequence, np.ndarray))
        ):
            inputs = [inputs]
        if not isinstance(inputs, Sequence) or len(inputs) == 0:
            raise CircuitError("no inputs given; pass a string or a list of strings")
        fast = self._encode_same_length(inputs, add_bos)
        if fast is not None:
            return fast
        rows = []
        for n, text in enumerate(inputs):
            ids = np.asarray(text, dtype=np.int64) if isinstance(text, np.ndarray) else self.vocab.encode(text, add_bos)
            if len(ids) == 0:
                raise CircuitError(f"input {n} is empty; give at least one token")
            self._check_len(len(ids), n)
            rows.append(ids)
        T = max(len(r) for r in rows)
        ids = np.zeros((len(rows), T), dtype=np.int64)
        valid = np.zeros((len(rows), T), dtype=bool)
        for n, r in enumerate(rows):
            ids[n, : len(r)] = r
            valid[n, : len(r)] = True
        return ids, valid

    def _encode_same_length(self, inputs, add_bos) -> tuple[np.ndarray, np.ndarray] | None:
        """The checker's hot path: many token lists of one length, all known tokens. None: take the careful path."""
        if not isinstance(inputs[0], list) or not inputs[0]:
            return None
        T = len(inputs[0])
        ids_of = self.vocab.ids
        try:
            flat = [ids_of[t] for row in inputs for t in row]
        except (KeyError, TypeError):
            return None
        if len(flat) != T * len(inputs) or any(len(r) != T for r in inputs):
            return None
        ids = np.array(flat, dtype=np.int64).reshape(len(inputs), T)
        bos = self.vocab.bos
        if bos is not None:
            b = ids_of[bos]
            if (ids == b).any():
                return None
            if add_bos is None or add_bos:
                ids = np.concatenate([np.full((len(inputs), 1), b), ids], axis=1)
        self._check_len(ids.shape[1], 0)
        return ids, np.ones(ids.shape, dtype=bool)

    def _checked_ids(self, ids, valid=None) -> np.ndarray:
        """Token ids [batch, seq] as int64, or a one-line error: the checks every entry point makes."""
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise CircuitError(f"token ids must be integers; got an array of {ids.dtype}")
        if ids.ndim != 2:
            raise CircuitError(f"token ids must be [batch, seq]; got shape {ids.shape}")
        if ids.shape[1] == 0:
            raise CircuitError("the input is empty; give at least one token")
        if ids.size and (ids.min() < 0 or ids.max() >= len(self.vocab)):
            n, t = (int(i) for i in np.argwhere((ids < 0) | (ids >= len(self.vocab)))[0])
            raise CircuitError(
                f"token id {int(ids[n, t])} of input {n} at position {t} is outside the vocabulary "
                f"(ids 0..{len(self.vocab) - 1})"
            )
        self._check_len(ids.shape[1], 0)
        if valid is not None and np.shape(valid) != ids.shape:
            raise CircuitError(f"valid has shape {np.shape(valid)} but the ids have {ids.shape}; it needs the same")
        return ids.astype(np.int64, copy=False)

    def _check_len(self, T: int, n: int) -> None:
        if self.n_ctx is not None and T > self.n_ctx:
            why = f" (W_pos has {self.W_pos.shape[1]} columns)" if self.W_pos is not None else ""
            raise CircuitError(f"input {n} has {T} tokens but n_ctx is {self.n_ctx}{why}")

    def run(self, inputs, add_bos: bool | None = None, keep="all") -> Trace:
        """Run a batch (padded on the right where lengths differ).

        `keep` says which intermediates the trace holds: "all" (the default), or names among
        trace.KEEP_NAMES, e.g. keep=("pattern",); () keeps only the final residual stream and logits,
        as a real model's batch needs (GPT-2 small at 8 × 1024 holds about 800 MB with "all").
        """
        ids, valid = self.encode(inputs, add_bos)
        return self.run_ids(ids, valid, keep)

    def run_ids(self, ids: np.ndarray, valid: np.ndarray | None = None, keep="all") -> Trace:
        """The forward pass on ids [b, T]; `valid` [b, T] marks real (unpadded) tokens; `keep` as in `run`."""
        ids = self._checked_ids(ids, valid)
        valid = np.ones(ids.shape, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
        # Overflow is not silent: every stage's result is checked and named in a CircuitError.
        with np.errstate(over="ignore", invalid="ignore"):
            return self._forward(ids, valid, check_keep(keep))

    def _forward(self, ids: np.ndarray, valid: np.ndarray, keep: frozenset[str]) -> Trace:
        embed, pos = self._embed(ids)  # [b, T, d_model], [T | 1, d_model]
        padding = None if valid.all() else valid  # None: every input is full length, one mask for all
        layers, x = self._blocks_from(embed + pos, 0, padding, keep)
        return self._finish(ids, valid, embed, pos, layers, x, keep)

    def _embed(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # [b, T] -> [b, T, d_model], [T | 1, d_model]
        T = ids.shape[1]
        pos = self._W_pos_rows[:T] if self._W_pos_rows is not None else np.zeros(self.d_model, self.dtype)
        return self._W_E_rows[ids], pos

    def _blocks_from(self, x: np.ndarray, start: int, padding, keep, edit=None) -> tuple[list, np.ndarray]:
        """The blocks from `start` on, from the residual stream `x` [b, T, d_model]: their traces and the stream
        after the last; `edit` is added after the heads of block `start`."""
        layers = []
        for i in range(start, self.n_layers):
            x, layer = transformer_block(
                x, self._run_blocks[i], padding, i, keep, edit if i == start else None
            )  # [b, T, d_model]
            layers.append(layer)
        return layers, x

    def _finish(self, ids, valid, embed, pos, layers, x, keep) -> Trace:
        """The trace of a run whose blocks left `x` [b, T, d_model]: ln_final and the logits."""
        final = F.layer_norm(x, *self._ln_final) if self._ln_final else x  # [b, T, d_model]
        logits = None if self._W_U_cols is None else F.linear(final, self._W_U_cols, self._b_U)  # [b, T, n_vocab]
        for what, out in (("ln_final", final), ("the logits", logits)):
            if out is not None and not np.isfinite(out).all():
                raise CircuitError(f"{what} overflowed to inf/NaN: the weights are too large for these inputs")
        kept = "embed" in keep
        return Trace(
            self,
            ids,
            valid,
            embed if kept else None,
            np.broadcast_to(pos, embed.shape) if kept else None,
            layers,
            x,
            final,
            logits,
        )

    def run_edited(
        self, trace: Trace, delta: np.ndarray, layer: int, part: str = "attn", rows=None, keep="all"
    ) -> Trace:
        """An intervention: the inputs `rows` of `trace` (default all) run again with `delta` [n, T, d_model]
        added to the residual stream where it was written: after layer `layer`'s heads (`part` "attn") or
        after the whole layer ("mlp"); layer −1 is the embedding. The layers before the edit are `trace`'s own.
        `trace` must hold that layer's resid_pre and resid_post (run it with keep "all", or both named)."""
        if part not in ("attn", "mlp") or not -1 <= layer < self.n_layers:
            raise CircuitError(
                f"run_edited: no residual stream at layer {layer}, part {part!r}; choose a layer "
                f"-1..{self.n_layers - 1} and part 'attn' or 'mlp'"
            )
        rows = np.arange(trace.batch) if rows is None else np.asarray(rows, dtype=int)
        ids, valid, keep = trace.ids[rows], trace.valid[rows], check_keep(keep)
        if np.shape(delta) != (*ids.shape, self.d_model):
            raise CircuitError(
                f"run_edited: delta has shape {np.shape(delta)}; it needs [inputs, seq, d_model] = "
                f"{(*ids.shape, self.d_model)}"
            )
        embed, pos = self._embed(ids)  # [n, T, d_model], [T | 1, d_model]
        if layer == -1:
            x, start, edit = embed + pos + delta, 0, None
        elif part == "attn" and self.blocks[layer].mlp is None:  # nothing after the heads: the layer's output
            x, start, edit = trace.layers[layer].held("resid_post")[rows] + delta, layer + 1, None
        elif part == "attn":
            x, start, edit = trace.layers[layer].held("resid_pre")[rows], layer, delta
        else:
            x, start, edit = trace.layers[layer].held("resid_post")[rows] + delta, layer + 1, None
        before = [l.rows(rows) for l in trace.layers[:start]]
        padding = None if valid.all() else valid
        with np.errstate(over="ignore", invalid="ignore"):
            layers, x = self._blocks_from(x, start, padding, keep, edit)
            return self._finish(ids, valid, embed, pos, before + layers, x, keep)

    def __call__(self, inputs, add_bos: bool | None = None) -> Trace:
        return self.run(inputs, add_bos)
