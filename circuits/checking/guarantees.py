"""What every verdict guarantees beyond a puzzle's own targets, so that every puzzle (and every puzzle written later)
inherits it without a line of its own:

- declared writes: each head and MLP writes only into the residual directions the puzzle gives it (`writes=` on
  the Puzzle, or else the direction families its reference answer writes), so a write the targets do not read
  cannot slip through;
- declared reads: each head's W_Q, W_K and W_V, each MLP's W_in and W_U read only the residual directions the
  puzzle lets them (`reads=`, or else the direction families the reference reads), so a shortcut through a
  direction the mechanism does not use (a position, BOS, the current token for the prediction) is refused;
- a live sharpness: a declared sharpness symbol (or matrix) must control the attention the targets depend on —
  an answer that still passes with it at zero has the scale baked into its numbers;
- a true scale (checking/scale.py): the sharpness is one factor on every score the learner writes, and the answer
  holds from its margin up to 100× it;
- no vacuous target: a target that checks nothing on any input is the puzzle's mistake, never a pass.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from circuits.errors import CircuitError
from circuits.model.decompose import Writes, parts
from circuits.targets.base import Kind

WRITE_TOL = 1e-9  # a residual direction is written when W_O W_V (or W_out, b_out) reaches this in its row


# --- declared writes ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Writer:
    """One part of a model that writes into the residual stream: a head (`head 1.0`) or an MLP (`mlp 0`)."""

    name: str
    matrix: str  # what decides the write, as the learner knows it
    out: np.ndarray  # [d_model, n]: column j is one way it writes; row r how much reaches direction r


def writers(model) -> list[Writer]:
    """Every head and MLP of `model`, with what each can write (OV circuits and what the value bias reaches through
    W_O; an MLP's W_out and b_out)."""
    return [Writer(p.name, p.matrix, p.out) for p in parts(model) if p.kind in (Writes.HEAD, Writes.MLP)]


def written(writer: Writer, labels: Sequence[str]) -> dict[str, float]:
    """The directions `writer` reaches, with the largest amount per unit of what it reads."""
    size = np.abs(writer.out).max(axis=1) if writer.out.size else np.zeros(len(labels))
    return {labels[r]: float(size[r]) for r in np.flatnonzero(size > WRITE_TOL)}


def families(directions) -> list[str]:
    """`pred:a`, `pred:b`, `seen` → `pred:*`, `seen`: a reference's writes, widened to the families they belong to."""
    return list(dict.fromkeys(f"{d.partition(':')[0]}:*" if ":" in d else d for d in directions))


def allowed(pattern_list: Sequence[str], direction: str) -> bool:
    """Whether `direction` matches one of the patterns (fnmatch's, case kept)."""
    return _allowed(tuple(pattern_list), direction)


@functools.lru_cache(maxsize=8192)  # an audit asks it of every direction, for every reader of every mutant
def _allowed(patterns: tuple[str, ...], direction: str) -> bool:
    return any(fnmatch.fnmatchcase(direction, p) for p in patterns)


def declared_writes(model) -> dict[str, list[str]]:
    """What a (reference) model writes, per writer, as direction families: the default declaration."""
    labels = model.residual.labels
    return {w.name: families(written(w, labels)) for w in writers(model)}


@dataclass(frozen=True)
class ReferenceFacts:
    """What a puzzle's reference answer decides for every answer to it: where each head and MLP may write, what
    each matrix may read, and the sharpness names it writes its scores with (each must then scale every score a
    learner writes)."""

    writes: dict[str, list[str]]
    reads: dict[str, list[str]]
    attention: tuple[str, ...]


_REFERENCES: dict[tuple, ReferenceFacts | None] = {}


def reference_facts(attempt) -> ReferenceFacts | None:
    """The facts of this puzzle's reference answer (the shipped reference, or solutions/ beside a course's puzzle
    file), read once per version of it; None when there is none."""
    from circuits.checking.loader import load, statement_file
    from circuits.checking.validate import validated

    ref = statement_file(attempt)  # never a file found beside a graded submission: the grader's own reference
    if ref is None or not ref.is_file():
        return None
    stat = ref.stat()
    key = (str(ref.resolve()), stat.st_mtime_ns, stat.st_size, attempt.puzzle.id)
    if key not in _REFERENCES:
        reference = validated(load(ref))
        ok = not reference.missing and reference.puzzle.id == attempt.puzzle.id and reference.puzzle.build is not None
        _REFERENCES[key] = _facts(reference) if ok else None
    return _REFERENCES[key]


def _facts(reference) -> ReferenceFacts:
    from circuits.checking.answer_names import head_matrices
    from circuits.checking.scale import attention_names

    model = reference.model()
    return ReferenceFacts(
        declared_writes(model),
        declared_reads(model),
        tuple(attention_names(reference, head_matrices(reference, model))),
    )


def _facts_if_built(attempt) -> ReferenceFacts | None:
    """reference_facts, or None where the reference does not build (an author's reference in the making)."""
    try:
        return reference_facts(attempt)
    except CircuitError:
        return None


def reference_attention(attempt) -> tuple[str, ...]:
    """The sharpness names this puzzle's reference writes its scores with; none without a reference that builds
    (the answer's own names then decide, checking/scale.py)."""
    facts = _facts_if_built(attempt)
    return facts.attention if facts else ()


def writes_for(attempt) -> dict[str, list[str]] | None:
    """Where each head and MLP of this puzzle may write: its `writes=`, else what its reference answer writes
    (the shipped reference, or solutions/ beside a course's puzzle file); None when there is neither."""
    if attempt.puzzle.writes is not None:
        return {k: list(v) for k, v in attempt.puzzle.writes.items()}
    facts = reference_facts(attempt)
    return None if facts is None else facts.writes


def check_writes(
    model, writes: Mapping[str, Sequence[str]], shown: str, answer_names: Mapping[str, str] | None = None
) -> None:
    """One CircuitError line for the first head or MLP that writes outside the directions it is given;
    `answer_names` maps a writer ("head 1.0") to the answer's name for its output matrix ("W_O1")."""
    labels = model.residual.labels
    for w in writers(model):
        if w.name not in writes:
            continue
        given = tuple(writes[w.name])
        outside = {d: v for d, v in written(w, labels).items() if not allowed(given, d)}
        if outside:
            first = ", ".join(f"{d} ({v:.3g})" for d, v in list(outside.items())[:3])
            more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
            where = ", ".join(given) if given else "nothing"
            matrix = (answer_names or {}).get(w.name) or f"{w.name}'s {w.matrix}"
            detail = (
                f"{w.name} writes into {first}{more}, but this puzzle lets it write only into {where}: the rows of "
                f"{matrix} for them must be 0"
            )
            err = CircuitError(f"{shown}: {detail}")
            err.detail, err.reader = detail, None  # the line without the file's name: a note on a failing hint
            raise err


# --- declared reads -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reader:
    """One matrix that reads the residual stream, as it reaches what it feeds: a head's W_Q (through W_K), W_K
    (through W_Q and b_Q), W_V (through W_O); an MLP's W_in (its units that write); W_U."""

    name: str  # "head 1.0 W_K", "mlp 0 W_in", "W_U": the key of `reads=`
    part: str  # "head 1.0", "mlp 0", "W_U"
    matrix: str  # the role: W_Q, W_K, W_V, W_in, W_U
    into: np.ndarray  # [n, d_model]: column r is how the reader takes in direction r (0: not read)
    raw: np.ndarray  # [rows, d_model]: the matrix itself, to name the entry that reads
    weight: np.ndarray  # [rows]: how much each row of `raw` reaches what it feeds (picks the entry to name)


def _head_readers(head) -> list[Reader]:
    W_Q, W_K, W_V, W_O = (np.asarray(getattr(head, k), float) for k in ("W_Q", "W_K", "W_V", "W_O"))
    b_Q = np.asarray(head.b_Q, float)
    qk = W_Q.T @ W_K  # [d_model, d_model]: query direction × key direction
    rows = lambda W: np.linalg.norm(W, axis=1)  # noqa: E731
    return [
        Reader(f"{head.name} W_Q", head.name, "W_Q", qk.T, W_Q, rows(W_K)),
        Reader(f"{head.name} W_K", head.name, "W_K", np.vstack([qk, b_Q @ W_K]), W_K, rows(W_Q) + np.abs(b_Q)),
        Reader(f"{head.name} W_V", head.name, "W_V", W_O @ W_V, W_V, np.linalg.norm(W_O, axis=0)),
    ]


def readers(model) -> list[Reader]:
    """Every matrix of `model` that reads the residual stream (a query's reads that only shift every key's score
    alike are not reads: softmax ignores them)."""
    found = []
    for l, block in enumerate(model.blocks):
        for head in block.heads:
            found += _head_readers(head)
        if block.mlp is not None:
            W_in, W_out = np.asarray(block.mlp.W_in, float), np.asarray(block.mlp.W_out, float)
            live = np.linalg.norm(W_out, axis=0)  # [d_mlp]: a unit that writes nothing reads nothing
            found.append(Reader(f"mlp {l} W_in", f"mlp {l}", "W_in", W_in[live > 0], W_in, live))
    if model.W_U is not None:
        W_U = np.asarray(model.W_U, float)
        found.append(Reader("W_U", "W_U", "W_U", W_U, W_U, np.ones(W_U.shape[0])))
    return found


def read(reader: Reader, labels: Sequence[str]) -> dict[str, float]:
    """The directions `reader` reads, with the largest amount it takes in of each."""
    size = np.abs(reader.into).max(axis=0) if reader.into.size else np.zeros(len(labels))
    return {labels[r]: float(size[r]) for r in np.flatnonzero(size > WRITE_TOL)}


def declared_reads(model) -> dict[str, list[str]]:
    """What a (reference) model reads, per reader, as direction families: the default declaration."""
    labels = model.residual.labels
    return {r.name: families(read(r, labels)) for r in readers(model)}


def reads_for(attempt) -> dict[str, list[str]] | None:
    """What each reader of this puzzle may read: its `reads=`, else what its reference answer reads; None when
    there is neither."""
    if attempt.puzzle.reads is not None:
        return {k: list(v) for k, v in attempt.puzzle.reads.items()}
    facts = _facts_if_built(attempt)  # none: the reads are unknown, said under "not checked"
    return None if facts is None else facts.reads


def _entry(reader: Reader, r: int, row_labels: Sequence[str] | None) -> tuple[str, float]:
    """The entry of the reader's matrix that reads column r most: its row (labelled where the matrix is) and value."""
    i = int(np.argmax(np.abs(reader.raw[:, r]) * (reader.weight + 1e-300)))
    row = row_labels[i] if row_labels is not None and i < len(row_labels) else str(i)
    return row, float(reader.raw[i, r])


def check_reads(
    model, reads: Mapping[str, Sequence[str]], shown: str, answer_names: Mapping[str, str] | None = None
) -> None:
    """One CircuitError line for the first matrix that reads a direction outside those it is given;
    `answer_names` maps a reader ("head 1.0 W_K") to the answer's name for it ("W_K1")."""
    labels = model.residual.labels
    for reader in readers(model):
        if reader.name not in reads:
            continue
        given = tuple(reads[reader.name])
        outside = [d for d in read(reader, labels) if not allowed(given, d)]
        if not outside:
            continue
        matrix = (answer_names or {}).get(reader.name) or (
            "W_U" if reader.part == "W_U" else f"{reader.part}'s {reader.matrix}"
        )
        rows = model.vocab.tokens if reader.matrix == "W_U" else None
        row, value = _entry(reader, labels.index(outside[0]), rows)
        entry = f"{matrix}[{row}, {outside[0]}]" if matrix[:1] == "W" else f"row {row}"
        more = f" (and {', '.join(outside[1:3])}{' …' if len(outside) > 3 else ''})" if len(outside) > 1 else ""
        where = ", ".join(given) if given else "nothing"
        detail = (
            f"{matrix} reads {outside[0]} ({entry} = {value:.3g}){more}, but this puzzle lets it read only {where}: "
            f"that column of {matrix} must be 0"
        )
        err = CircuitError(f"{shown}: {detail}")
        err.detail = detail  # the line without the file's name: a note on a failing hint
        err.reader = reader.part  # "head 1.0", "mlp 0", "W_U": whose read it is, for a hint about that part
        raise err


# --- inputs that span the model ---------------------------------------------------------------------------------
def spanning(inputs, model):
    """`inputs`, with its longest length raised to what the model takes (n_ctx, BOS counted): a circuit checked only
    on shorter inputs could fail at the positions nothing checked."""
    if model is None or getattr(model, "n_ctx", None) is None:
        return inputs
    top = model.n_ctx - (1 if model.vocab.bos is not None else 0)
    return dataclasses.replace(inputs, max_len=top) if top > inputs.max_len else inputs


# --- a live sharpness ---------------------------------------------------------------------------------------------
def dead_sharpness(attempt, model_at, batch, evaluate) -> str | None:
    """The sharpness names that do not control anything the targets check: with them at 0 the answer still passes
    every behaviour target on `batch` (None: the sharpness is live, or the puzzle declares none)."""
    from circuits.checking.margins import scaled

    puzzle = attempt.puzzle
    targets = [t for t in puzzle.targets if t.kind is Kind.BEHAVIOUR]
    if not puzzle.sharpness or not targets or not batch:
        return None
    try:
        model = model_at(scaled(attempt.answer, puzzle.sharpness, 0.0))
    except CircuitError:
        return None  # an answer that cannot be built without its sharpness depends on it
    ok, _ = evaluate(model, targets, batch)
    return " and ".join(puzzle.sharpness) if ok.all() else None


def dead_sharpness_message(names: str, n: int) -> str:
    return (
        f"your answer still passes every target on {n:,} inputs with {names} at 0, so {names} does not "
        f"control the attention the targets depend on (the scale sits in the numbers): write the scores with "
        f"{names} so that it sets how sharp they are"
    )


# --- no vacuous target --------------------------------------------------------------------------------------------
def vacuous(targets, checked: np.ndarray) -> list[str]:
    """The labels of targets that checked no position of any input (`checked[t]` positions for target t)."""
    return [t.label for t, n in zip(targets, checked) if n == 0]
