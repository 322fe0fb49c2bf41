"""`circuits new NN_name [DIR]`: a puzzle skeleton and its solution twin, written only where no file exists yet."""

from __future__ import annotations

import re
from pathlib import Path

from circuits.errors import CircuitError

HEAD = '''"""Puzzle {number:02d} · {title}

Replace this statement with your own: what the learner is given, what they write, and the
exact requirement each target checks (every number in it is one the checker uses).

Tokens a and b have one-hot directions `a` and `b`. The given head scores every key the
same (W_Q = W_K = 0), so it attends evenly to positions 0..i. Write its W_V (1 × 2) so
that its result at every position i is the fraction of the tokens 0..i that are a,
within 0.01, for every string of 1 to 10 tokens.

Worked example, "aab": the results are 1, 1 and 2/3.
"""

from circuits import Basis, blank, Head, HeadZ, Inputs, Model, Output, Puzzle, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
vocab = Vocab.chars_of("ab")
resid = Basis(["a", "b"])
W_E = blank(resid, vocab.tokens)  # [d_model = 2, n_vocab = 2]: one-hot
W_E["a", "a"] = W_E["b", "b"] = 1
ZERO = blank(1, resid)  # W_Q = W_K = 0: every key scores 0, so attention is even


def spec(tokens: list[str]) -> list[float]:
    """The target in plain Python: at each position i, the fraction of the tokens 0..i that are a."""
    return [tokens[: i + 1].count("a") / (i + 1) for i in range(len(tokens))]


def build(answer) -> Model:
    return Model(vocab, W_E, params=answer.params, name="{name}",
                 layers=[[Head(W_Q=ZERO, W_K=ZERO, W_V=answer.W_V)]])


puzzle = Puzzle(
    number={number},
    name="{name}",
    title="{title}",
    answer=["W_V"],
    build=build,
    targets=[Output(HeadZ(0, 0), spec, tol=0.01,
                    description="head 0.0's result is the fraction of a's so far (±0.01)")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=10, families=[Uniform()]),
    examples=["aab", "ab", "bbba"],
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_V: (1, 2)
'''

PUZZLE_ANSWER = '''W_V = FILL_ME_IN("1 non-zero entry")
'''

SOLUTION_ANSWER = '''W_V = blank(1, resid)
W_V[0, "a"] = 1

# Mutants `circuits audit` may let through, each with the reason it is not a wrong circuit:
# ("W_V[0, b] 0 → 1", "why this edit cannot change what any target checks"). Keep it empty if you can.
ALLOWED_MUTANTS: list[tuple[str, str]] = []


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_V: (1, 2)
# W_V = FILL_ME_IN("1 non-zero entry")
'''

_NAME = re.compile(r"^(\d\d)_([a-z][a-z0-9_]*)$")


def project_root(start: Path) -> Path:
    """The folder holding puzzles/ or solutions/ at or above `start`, else `start` itself."""
    for d in (start, *start.parents):
        if (d / "puzzles").is_dir() or (d / "solutions").is_dir():
            return d
    return start


def new(name: str, folder: str | None = None) -> list[Path]:
    """Write puzzles/NN_name.py and solutions/NN_name.py under `folder` (default: this project); never overwrite."""
    name = name.removesuffix(".py")
    m = _NAME.match(name)
    if not m:
        raise CircuitError(f"new: {name!r} is not a puzzle name; it needs two digits, an underscore and a lowercase "
                           "name, e.g. 91_duplicate_token")
    number, slug = int(m.group(1)), m.group(2)
    root = Path(folder) if folder is not None else project_root(Path.cwd())
    if root.exists() and not root.is_dir():
        raise CircuitError(f"new: {root} is a file, not a folder")
    from circuits.checking.loader import display

    paths = [root / "puzzles" / f"{name}.py", root / "solutions" / f"{name}.py"]
    for p in paths:
        if p.exists() or p.is_symlink():
            raise CircuitError(f"new: {display(p)} already exists; nothing was written (choose another name, or move "
                               "it away)")
        same = sorted(p.parent.glob(f"{m.group(1)}_*.py")) if p.parent.is_dir() else []
        if same:
            raise CircuitError(f"new: {display(same[0])} already has the number {m.group(1)}; nothing was written "
                               "(choose another number)")
    text = HEAD.replace("{number:02d}", f"{number:02d}").replace("{number}", str(number)) \
        .replace("{name}", slug).replace("{title}", slug.replace("_", " ").capitalize())
    written = []
    try:
        for p, answer in zip(paths, (PUZZLE_ANSWER, SOLUTION_ANSWER)):
            p.parent.mkdir(parents=True, exist_ok=True)
            with open(p, "x", encoding="utf-8") as f:  # "x": fails rather than replace a file made meanwhile
                f.write(text + answer)
            written.append(p)
    except FileExistsError as e:
        for p in written:  # ours, written a moment ago: leave no half pair
            p.unlink()
        raise CircuitError(f"new: {display(Path(e.filename))} appeared while writing; nothing was written") from None
    return written
