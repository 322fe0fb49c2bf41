"""Head scan: ask every head of a model the puzzles' questions (previous-token, induction, …) and rank the answers.

A head's score for a behaviour is its mean attention on the behaviour's target, over the
query rows that HAVE a target (and, for first-token, not position 0, where every head
trivially attends to the first token). TransformerLens's "mul" score averages over every
row instead, so rows without a target (the whole first copy of a repeated sequence, for
induction) pull even a perfect head down to about 0.5; here a perfect head scores 1.
A head "shows" a behaviour when its score is at least the threshold (default 0.5: most of
its attention, on average, lands on the target).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .behaviours import BEHAVIOURS, mass_on_target
from .errors import CircuitError
from .model import Model

DEFAULT_BEHAVIOURS = ("previous-token", "duplicate-token", "induction", "first-token")
DEFAULT_THRESHOLD = 0.5
MAX_BATCH = 64  # `circuits scan --batch`: patterns take batch × heads × tokens² numbers
MAX_PATTERN_BYTES = 2**29  # `circuits scan`: the attention patterns it may hold (512 MiB; the peak is about 3× that)


@dataclass(frozen=True)
class HeadScore:
    """One head's score for one behaviour, and how many query rows it was averaged over."""

    behaviour: str
    layer: int
    head: int
    score: float
    rows: int

    @property
    def name(self) -> str:
        return f"head {self.layer}.{self.head}"


@dataclass(frozen=True)
class ScanResult:
    """Scores per behaviour, best head first, and the threshold that marks a head as showing it."""

    ranked: dict[str, list[HeadScore]]
    threshold: float
    inputs: tuple[int, int]  # (batch, seq) of the token ids scanned

    def top(self, behaviour: str, n: int = 1) -> list[HeadScore]:
        return self._of(behaviour)[:n]

    def found(self, behaviour: str) -> list[HeadScore]:
        """The heads at or above the threshold, best first."""
        return [s for s in self._of(behaviour) if s.score >= self.threshold]

    def _of(self, behaviour: str) -> list[HeadScore]:
        if behaviour not in self.ranked:
            raise CircuitError(f"the scan did not look for {behaviour!r}; it looked for {', '.join(self.ranked)}")
        return self.ranked[behaviour]

    def to_dict(self) -> dict:
        return {"threshold": self.threshold, "inputs": {"batch": self.inputs[0], "seq": self.inputs[1]},
                "behaviours": {b: [asdict(s) for s in scores] for b, scores in self.ranked.items()}}


def repeated_inputs(model: Model, seq_len: int = 20, batch: int = 4, seed: int = 0,
                    bos_id: int | None = None) -> np.ndarray:  # -> [batch, (1 +) 2·seq_len]
    """Random tokens repeated once, BOS in front if the vocabulary has one: every behaviour has targets here.

    Each half draws distinct tokens when the vocabulary has enough, so no target is ambiguous.
    """
    if bos_id is None and model.vocab.bos is not None:
        bos_id = model.vocab.id(model.vocab.bos)
    choices = np.array([i for i in range(len(model.vocab)) if i != bos_id])  # [n_choices]
    if seq_len < 1 or batch < 1:
        raise CircuitError(f"seq_len and batch must be at least 1; got seq_len={seq_len}, batch={batch}")
    T = 2 * seq_len + (bos_id is not None)
    if model.n_ctx is not None and T > model.n_ctx:
        raise CircuitError(f"a repeated sequence of seq_len {seq_len} has {T} tokens but n_ctx is {model.n_ctx}; "
                           f"use seq_len ≤ {(model.n_ctx - (bos_id is not None)) // 2}")
    rng = np.random.default_rng(seed)
    # Distinct tokens within a half (when the vocabulary allows) give every target one right answer.
    distinct = seq_len <= len(choices)
    half = np.stack([rng.choice(choices, size=seq_len, replace=not distinct) for _ in range(batch)])  # [batch, seq_len]
    ids = np.concatenate([half, half], axis=1)  # [batch, 2·seq_len]
    if bos_id is not None:
        ids = np.concatenate([np.full((batch, 1), bos_id), ids], axis=1)  # [batch, 1 + 2·seq_len]
    return ids.astype(np.int64)


def targets_for(behaviour: str, ids: np.ndarray) -> np.ndarray:  # [b, T] -> [b, T], −1 where no target
    if behaviour not in BEHAVIOURS:
        raise CircuitError(f"unknown behaviour {behaviour!r}; choose from {', '.join(BEHAVIOURS)}")
    targets = BEHAVIOURS[behaviour](ids).copy()
    if behaviour == "first-token":
        targets[:, 0] = -1  # position 0 can only attend to itself: no evidence either way
    return targets


def head_scores(pattern: np.ndarray, targets: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, int]:
    """pattern [b, h, T, T], targets [b, T] -> mean mass on target per head [h], and the rows counted."""
    mass = mass_on_target(pattern, targets, valid)  # [b, h, T], NaN where no target
    has = ~np.isnan(mass[:, 0])  # [b, T]
    rows = int(has.sum())
    if rows == 0:
        return np.full(pattern.shape[1], np.nan), 0
    return np.nansum(mass, axis=(0, 2)) / rows, rows  # [h]


def scan(model: Model, ids: np.ndarray | None = None, behaviours: Sequence[str] = DEFAULT_BEHAVIOURS,
         threshold: float = DEFAULT_THRESHOLD, valid: np.ndarray | None = None, **inputs) -> ScanResult:
    """Score every head of `model` for each behaviour on token ids [b, T] (default: `repeated_inputs(model, **inputs)`)."""
    if isinstance(behaviours, str):
        behaviours = (behaviours,)
    for b in behaviours:
        targets_for(b, np.zeros((1, 1), dtype=np.int64))  # unknown names fail before the forward pass
    if not 0.0 <= threshold <= 1.0:
        raise CircuitError(f"threshold {threshold} is not an attention mass; choose a number in [0, 1]")
    ids = repeated_inputs(model, **inputs) if ids is None else np.asarray(ids)
    if ids.ndim == 1:
        ids = ids[None]
    valid = np.ones(ids.shape, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    model.encode(ids)  # checks ids and length, with the model's own messages
    trace = model.run_ids(ids, valid)
    ranked = {}
    for b in behaviours:
        targets = targets_for(b, ids)
        scores = []
        for l, layer in enumerate(trace.layers):
            if layer.pattern is None:
                continue
            per_head, rows = head_scores(layer.pattern, targets, valid)  # [h]
            if rows == 0:
                raise CircuitError(f"no query row of these inputs has a {b} target; scan a repeated sequence "
                                   "(scan(model) makes one)")
            scores += [HeadScore(b, l, h, float(s), rows) for h, s in enumerate(per_head)]
        ranked[b] = sorted(scores, key=lambda s: (-s.score, s.layer, s.head))
    return ScanResult(ranked, float(threshold), tuple(ids.shape))


# --- display --------------------------------------------------------------------------------
def scan_table(result: ScanResult, top: int = 5):
    """A rich table: for each behaviour its best `top` heads, with ✓ on those at or above the threshold."""
    from rich.table import Table

    table = Table(title=f"Head scan on {result.inputs[0]} × {result.inputs[1]} tokens: mean attention on the target "
                        f"over rows that have one (✓ ≥ {result.threshold:g})",
                  title_justify="left", box=None, padding=(0, 1))
    for col, justify in (("behaviour", "left"), ("rank", "right"), ("head", "left"), ("score", "right"),
                         ("", "left"), ("rows", "right")):
        table.add_column(col, justify=justify, no_wrap=True)
    for behaviour, scores in result.ranked.items():
        for rank, s in enumerate(scores[:top], 1):
            mark = "✓" if s.score >= result.threshold else ""
            bar = "█" * int(round(s.score * 10))
            table.add_row(behaviour if rank == 1 else "", str(rank), s.name, f"{s.score:.3f}", f"{bar:<10} {mark}",
                          str(s.rows))
        table.add_section()
    return table


# --- command line ---------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise CircuitError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="circuits scan", description="Rank every head of a model by the puzzles' attention behaviours, "
                "on random tokens repeated once. Nothing is downloaded.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--hf", metavar="PATH_OR_NAME", help="a local GPT-2 / GPT-Neo directory, or a name already in the "
                     "local Hugging Face cache (needs the [hf] extra)")
    src.add_argument("--npz", metavar="FILE", help="a model saved by circuits.export.save (.npz or .safetensors)")
    p.add_argument("--behaviour", action="append", metavar="NAME",
                   help=f"one of {', '.join(BEHAVIOURS)}; repeat or comma-separate "
                        f"(default: {', '.join(DEFAULT_BEHAVIOURS)})")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                   help=f"score at or above which a head shows the behaviour (default {DEFAULT_THRESHOLD})")
    p.add_argument("--seq-len", type=int, default=20, help="random tokens before the repeat (default 20)")
    p.add_argument("--batch", type=int, default=4, help="sequences to average over (default 4)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the tokens (default 0)")
    p.add_argument("--top", type=int, default=5, help="heads shown per behaviour (default 5)")
    p.add_argument("--json", action="store_true", help="print every score as JSON instead of a table")
    return p


def _load(args) -> tuple[Model, int | None]:
    """The model named on the command line, and the BOS id to put in front of the scanned tokens."""
    if args.npz:
        from .export import load

        return load(args.npz), None
    from .hf import from_hf, load_hf, load_tokenizer

    hf_model = load_hf(args.hf)
    model = from_hf(hf_model, tokenizer=load_tokenizer(args.hf, required=False, n_vocab=hf_model.config.vocab_size))
    bos = hf_model.config.bos_token_id
    return model, (int(bos) if bos is not None and 0 <= bos < len(model.vocab) else None)


def _check_numbers(args) -> None:
    """Numbers on the command line that are out of range, in one line, before a model is loaded."""
    if args.seed < 0:
        raise CircuitError(f"--seed {args.seed}: a seed is a whole number ≥ 0")
    if args.top < 1:
        raise CircuitError(f"--top {args.top}: show at least 1 head per behaviour")
    if not 1 <= args.batch <= MAX_BATCH:
        raise CircuitError(f"--batch {args.batch}: choose from 1 to {MAX_BATCH} sequences (MAX_BATCH in circuits/scan.py)")
    if args.seq_len < 1:
        raise CircuitError(f"--seq-len {args.seq_len}: choose at least 1 token before the repeat")


def _check_size(model: Model, args, bos_id: int | None) -> None:
    """Refuse a scan longer than MAX_TOKENS (without n_ctx) or whose patterns would not fit MAX_PATTERN_BYTES."""
    from .cli import MAX_TOKENS

    bos = bos_id is not None
    T = 2 * args.seq_len + bos
    if model.n_ctx is not None and T > model.n_ctx:
        return  # repeated_inputs says the model's own limit
    if model.n_ctx is None and T > MAX_TOKENS:
        raise CircuitError(f"--seq-len {args.seq_len} makes {T} tokens; a model without n_ctx takes at most "
                           f"{MAX_TOKENS} (MAX_TOKENS in circuits/cli.py): use --seq-len ≤ {(MAX_TOKENS - bos) // 2}")
    heads = sum(model.n_heads(l) for l in range(model.n_layers))
    need = 8 * args.batch * heads * T * T
    if need > MAX_PATTERN_BYTES:
        raise CircuitError(f"--batch {args.batch} × {T} tokens on {heads} heads needs {need / 2**20:,.0f} MiB of "
                           f"attention patterns; the limit is {MAX_PATTERN_BYTES / 2**20:,.0f} MiB "
                           "(MAX_PATTERN_BYTES in circuits/scan.py): use a smaller --batch or --seq-len")


def cli_scan(argv: list[str]) -> int:
    """`circuits scan …`: print the ranked heads; a mistake prints one line to stderr and returns 2."""
    try:
        args = _parser().parse_args(argv)
        _check_numbers(args)
        behaviours = [b.strip() for arg in (args.behaviour or [",".join(DEFAULT_BEHAVIOURS)])
                      for b in arg.split(",") if b.strip()]
        for b in behaviours:
            targets_for(b, np.zeros((1, 1), dtype=np.int64))
        model, bos_id = _load(args)
        _check_size(model, args, bos_id)
        result = scan(model, behaviours=behaviours, threshold=args.threshold, seq_len=args.seq_len,
                      batch=args.batch, seed=args.seed, bos_id=bos_id)
    except SystemExit as e:  # --help
        return int(e.code or 0)
    except CircuitError as e:
        print(f"circuits scan: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"circuits scan: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        from .render import console

        console().print(scan_table(result, top=args.top))
    return 0
