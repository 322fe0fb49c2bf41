"""`circuits new NN_name [DIR]`: a puzzle skeleton and its solution twin, written only where no file exists yet."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from circuits.errors import CircuitError

HEAD = '''"""Puzzle {number:02d} · {title}

Replace this statement with your own: what the learner is given, what
they write, and the exact requirement each target checks (every number in
it is one the checker uses).

Tokens a and b have one-hot directions `a` and `b`. The given head scores
every key the same (W_Q = W_K = 0), so it attends evenly to positions
0..i. Write its W_V (1 × 2) so that its result at every position i is the
fraction of the tokens 0..i that are a, within 0.01, for every string of
1 to 10 tokens.

Worked example, "aab": the results are 1, 1 and 2/3.
"""

from circuits import Basis, blank, Head, HeadZ, Inputs, Model, Output
from circuits import Puzzle, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ──────────────────────────────────────────────────────────────
vocab = Vocab.chars_of("ab")
resid = Basis(["a", "b"])
W_E = blank(resid, vocab.tokens)  # [d_model = 2, n_vocab = 2]: one-hot
W_E["a", "a"] = W_E["b", "b"] = 1
ZERO = blank(1, resid)  # W_Q = W_K = 0: every key scores 0, attention even


def spec(tokens: list[str]) -> list[float]:
    """The target in plain Python: at each position i, the fraction of
    the tokens 0..i that are a."""
    return [tokens[: i + 1].count("a") / (i + 1) for i in range(len(tokens))]


def build(answer) -> Model:
    head = Head(W_Q=ZERO, W_K=ZERO, W_V=answer.W_V)
    return Model(vocab, W_E, params=answer.params, name="{name}",
                 layers=[[head]])


puzzle = Puzzle(
    number={number},
    name="{name}",
    title="{title}",
    answer=["W_V"],
    build=build,
    targets=[Output(HeadZ(0, 0), spec, tol=0.01,
                    description="head 0.0's result is the fraction of a's "
                                "so far (±0.01)")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=10, families=[Uniform()]),
    examples=["aab", "ab", "bbba"],
    # Where each head and MLP may write: this head is judged by its result,
    # so nowhere. Left out, a part may write only where the reference does.
    writes={"head 0.0": []},
    # What each matrix may read ("head L.H W_Q|W_K|W_V", "mlp L W_in",
    # "W_U"). Left out, a matrix may read only what the reference's reads:
    # say here what another valid answer may read too.
    reads={"head 0.0 W_V": ["a", "b"]},
)

# ── your answer ─────────────────────────────────────────────────────────
# W_V: (1, 2)
'''

PUZZLE_ANSWER = """W_V = FILL_ME_IN("1 non-zero entry")
"""

SOLUTION_ANSWER = """W_V = blank(1, resid)
W_V[0, "a"] = 1

# Mutants `circuits audit` may let through, each with the reason it is not
# a wrong circuit: ("W_V[0, b] 0 → 1", "why this edit cannot change what
# any target checks"). Keep it empty if you can.
ALLOWED_MUTANTS: list[tuple[str, str]] = []


# ── stub: what `circuits reset` restores below the answer line ──────────
# # W_V: (1, 2)
# W_V = FILL_ME_IN("1 non-zero entry")
"""

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
        raise CircuitError(
            f"new: {name!r} is not a puzzle name; it needs two digits, an underscore and a lowercase "
            "name, e.g. 91_duplicate_token"
        )
    number, slug = int(m.group(1)), m.group(2)
    root = Path(folder) if folder is not None else project_root(Path.cwd())
    if root.exists() and not root.is_dir():
        raise CircuitError(f"new: {root} is a file, not a folder")
    from circuits.io.paths import shown as shown_path

    paths = [root / "puzzles" / f"{name}.py", root / "solutions" / f"{name}.py"]
    for p in paths:
        if p.exists() or p.is_symlink():
            raise CircuitError(
                f"new: {shown_path(p)} already exists; nothing was written (choose another name, or move it away)"
            )
        same = sorted(p.parent.glob(f"{m.group(1)}_*.py")) if p.parent.is_dir() else []
        if same:
            raise CircuitError(
                f"new: {shown_path(same[0])} already has the number {m.group(1)}; nothing was written "
                "(choose another number)"
            )
    text = (
        HEAD.replace("{number:02d}", f"{number:02d}")
        .replace("{number}", str(number))
        .replace("{name}", slug)
        .replace("{title}", slug.replace("_", " ").capitalize())
    )
    return write_pair(paths, [text + PUZZLE_ANSWER, text + SOLUTION_ANSWER])


def write_pair(paths: list[Path], texts: list[str]) -> list[Path]:
    """Write every file or none: each text goes to a temporary name beside its target first, then each is linked to
    its name (a link never replaces a file made meanwhile); on any failure everything written, and every folder
    made for it, is removed again, and the one line names the file that could not be written."""
    from circuits.io.paths import shown as shown_path

    made: list[Path] = []  # folders created here, removed again if nothing is written
    temps: list[Path] = []
    done: list[Path] = []
    current = paths[0]  # the file being written, named if writing fails
    try:
        for p, text in zip(paths, texts):
            current = p
            for d in reversed([p.parent, *p.parent.parents]):
                if not d.exists() and not d.is_symlink():
                    d.mkdir()
                    made.append(d)
            tmp = p.with_name(f".{p.name}.new-{os.getpid()}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            temps.append(tmp)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
        for p, tmp in zip(paths, temps):
            current = p
            os.link(tmp, p)  # fails if p exists: never over a file that appeared meanwhile
            done.append(p)
    except OSError as e:
        for p in [*done, *temps]:
            with contextlib.suppress(OSError):
                p.unlink()
        for d in reversed(made):
            with contextlib.suppress(OSError):
                d.rmdir()
        where, target = Path(e.filename or current), current
        if isinstance(e, FileExistsError) and where in paths:
            raise CircuitError(f"new: {shown_path(where)} appeared while writing; nothing was written") from None
        why = (
            f"{shown_path(target.parent)} is not a folder"
            if isinstance(e, (NotADirectoryError, FileExistsError))
            else e.strerror or str(e)
        )
        raise CircuitError(f"new: cannot write {shown_path(target)}: {why}; nothing was written") from None
    finally:
        for tmp in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()
    return paths
