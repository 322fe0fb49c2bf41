"""tracr's compiled programs beside the course's hand-built heads: RASP's histogram against puzzle 18, and
RASP's frac_prevs against puzzles 03 (uniform) and 19 (balanced_parens).

    python examples/tracr_side_by_side.py        # needs the [tracr] extra; offline, ~15 s after tracr imports

For each pair: which residual directions each head reads (W_Q, W_K, W_V) and writes (W_O·W_V), the scale of
its attention scores, its attention pattern on the same inputs (circuits' own heatmaps), and where a model
has two layers, what connects them (composition scores, and the directions an MLP writes that a head reads).
The functions return plain facts, so tests/test_tracr_example.py holds docs/tracr.md to them.

tracr names directions `tokens:a`, `indices:3`, `one`, `hist_1:2`; the number in a program's name (`hist_1`,
`map_3`) is RASP's global id counter, so it depends on what was built before. Column labels in the tables are
shortened to fit 80 columns: `tokens:` → `tok:`, `indices:` → `idx:`, `compiler_bos` → `BOS`.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

import circuits
from circuits import analysis as A
from circuits.checking import pipeline
from circuits.display.render import circuit_table, composition_table, pattern_heatmap, to_text

SOLUTIONS = Path(circuits.__file__).parent / "curriculum" / "solutions"
MAX_SEQ_LEN = 8
WIDTH = 80
HIST_INPUTS = ["abca", "abcdabcd"]
VOWEL_INPUTS = ["abcce", "eaab"]
PAREN_INPUTS = ["())(", "(())"]


# --- the models --------------------------------------------------------------------------------------
def compile_hist():
    """RASP's make_hist, compiled causally (so it counts the prefix, as puzzle 18 does) over puzzle 18's tokens."""
    from tracr.compiler import compiling, lib

    assembled = compiling.compile_rasp_to_model(lib.make_hist(), set("abcd"), MAX_SEQ_LEN, causal=True)
    return circuits.from_tracr(assembled, name="tracr hist")


def compile_frac_prevs(vocab: str, true_for: str, name: str):
    """RASP's make_frac_prevs of `token in true_for`, compiled causally over `vocab`."""
    from tracr.compiler import compiling, lib
    from tracr.rasp import rasp

    bools = rasp.Map(lambda t: t in true_for, rasp.tokens)
    assembled = compiling.compile_rasp_to_model(lib.make_frac_prevs(bools), set(vocab), MAX_SEQ_LEN, causal=True)
    return circuits.from_tracr(assembled, name=name)


def puzzle(stem: str):
    """The shipped reference answer of a puzzle, built and named for it: e.g. puzzle("18_histogram")."""
    model = pipeline.load(SOLUTIONS / f"{stem}.py").model()
    model.name = f"puzzle {stem[:2]}"
    return model


# --- facts about one head ----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Reads:
    """The residual directions a head's matrices touch (non-zero columns; for `writes` non-zero rows of W_O W_V)."""

    query: tuple[str, ...]
    key: tuple[str, ...]
    value: tuple[str, ...]
    writes: tuple[str, ...] | None  # None: the head has no W_O, its result z is read directly


def _named(mask: np.ndarray, labels) -> tuple[str, ...]:
    return tuple(str(labels[i]) for i in np.flatnonzero(mask))


def reads(model, layer: int = 0, index: int = 0) -> Reads:
    h = model.head(layer, index)
    labels = model.residual.labels
    fixed = h.pattern is not None  # a fixed pattern: its W_Q and W_K decide nothing
    writes = None
    if h.source.W_O is not None:
        writes = _named(np.any(A.ov_circuit(h).AB != 0, axis=1), labels)
    return Reads(
        query=() if fixed else _named(np.any(h.W_Q != 0, axis=0), labels),
        key=() if fixed else _named(np.any(h.W_K != 0, axis=0), labels),
        value=_named(np.any(h.W_V != 0, axis=0), labels),
        writes=writes,
    )


def attention(model, tokens: str, layer: int = 0, index: int = 0) -> np.ndarray:  # [query, key]
    """The head's pattern on one input (BOS at 0 if the model has one)."""
    return model.run([list(tokens)]).pattern(layer, index)[0]


def on_tokens(model, pattern: np.ndarray) -> np.ndarray:  # [T(+1), T(+1)] -> [T, T]: BOS's row and column left out
    return pattern[1:, 1:] if model.vocab.bos is not None else pattern


def bos_share(model, pattern: np.ndarray) -> float:
    """The most attention any token's query gives BOS (0 for a model without BOS)."""
    return float(pattern[1:, 0].max()) if model.vocab.bos is not None else 0.0


def score_gap(model, tokens: str, layer: int = 0, index: int = 0) -> float:
    """The largest visible score minus the smallest, over the token queries of one input: the softmax's sharpness."""
    s = model.run([list(tokens)]).layers[layer].scores[0, index]  # [query, key]
    start = 1 if model.vocab.bos is not None else 0
    s = s[start:][np.isfinite(s[start:])]
    return float(s.max() - s.min())


def result(model, tokens: str, layer: int = 0, index: int = 0) -> np.ndarray:  # [T]: one number per token
    """What the head computes at each token: its z where it has no W_O, else W_O z in the one direction it writes."""
    z = model.run([list(tokens)]).layers[layer].z[0, index]  # [T(+1), d_head]
    r = reads(model, layer, index)
    if r.writes is None:
        values = z[:, 0]
    else:
        if len(r.writes) != 1:
            raise ValueError(f"head {layer}.{index} writes {len(r.writes)} directions; result() reads one")
        h = model.head(layer, index)
        values = (z @ h.W_O.T)[:, model.residual.labels.index(r.writes[0])]  # [T(+1)]
    return values[1:] if model.vocab.bos is not None else values


def mlp_feeds(model, layer: int, index: int = 0) -> dict[int, tuple[str, ...]]:
    """Composition through an MLP: for each earlier MLP, the directions it writes that this head's W_V reads."""
    value = set(reads(model, layer, index).value)
    labels = model.residual.labels
    out = {}
    for l in range(layer):
        mlp = model.blocks[l].mlp
        if mlp is not None:
            hit = tuple(d for d in _named(np.any(mlp.W_out != 0, axis=1), labels) if d in value)
            if hit:
                out[l] = hit
    return out


# --- printing ----------------------------------------------------------------------------------------
def short(label: str) -> str:
    return label.replace("tokens:", "tok:").replace("indices:", "idx:").replace("compiler_bos", "BOS")


def _token_labels(model, tokens: str) -> list[str]:
    return (["BOS"] if model.vocab.bos is not None else []) + list(tokens)


def _qk_table(model, layer: int, index: int, title: str):
    h = model.head(layer, index)
    labels = [str(x) for x in model.residual.labels]
    qk = A.qk_circuit(h).AB * h.scale  # the scale a score is multiplied by (tracr's 1/√d_head)
    return circuit_table(qk, [short(x) for x in labels], [short(x) for x in labels], title=title)


def _reads_lines(name: str, r: Reads) -> list[str]:
    join = lambda ds: ", ".join(short(d) for d in ds) or "—"  # noqa: E731
    return [
        f"{name}",
        f"  query reads  {join(r.query)}",
        f"  key reads    {join(r.key)}",
        f"  value reads  {join(r.value)}",
        f"  writes       {join(r.writes) if r.writes is not None else '(no W_O: its result z is read)'}",
    ]


def _printer(out):
    """print for lines and for circuits' rich tables alike, rendered to 80 columns without colour."""

    def say(x="") -> None:
        print(x if isinstance(x, str) else to_text(x, WIDTH).rstrip(), file=out)

    return say


def head_pair(out, title: str, left, right, inputs, left_head=(0, 0), right_head=(0, 0), qk: bool = True) -> None:
    """Print two heads side by side: reads/writes, score scales, QK tables, patterns on the same inputs."""
    say = _printer(out)
    say("=" * WIDTH)
    say(title)
    say("=" * WIDTH)
    for model, head in ((left, left_head), (right, right_head)):
        for line in _reads_lines(f"{model.name}, head {head[0]}.{head[1]}:", reads(model, *head)):
            say(line)
        if model.head(*head).pattern is None:
            say(
                f"  score gap    {score_gap(model, inputs[0], *head):.1f} (largest − smallest visible score on "
                f"{inputs[0]!r})"
            )
        else:
            say(f"  fixed pattern {model.head(*head).pattern!r}: no scores")
        values = " ".join(f"{x:.3g}" for x in result(model, inputs[0], *head))
        say(f"  result       {values} (on {inputs[0]!r}, one per token)")
        say()
    if qk:
        for model, head in ((left, left_head), (right, right_head)):
            if model.head(*head).pattern is None:
                say(
                    _qk_table(
                        model,
                        *head,
                        title=f"{model.name} {head[0]}.{head[1]}: W_QK as scored (rows query, columns key)",
                    )
                )
                say()
    for tokens in inputs:
        for model, head in ((left, left_head), (right, right_head)):
            p = attention(model, tokens, *head)
            say(
                pattern_heatmap(
                    p, _token_labels(model, tokens), title=f"{model.name} {head[0]}.{head[1]} on {tokens!r}"
                )
            )
        say()


def composition(out, model) -> None:
    say = _printer(out)
    say(f"{model.name}: {model.n_layers} layers")
    say(composition_table(A.composition_scores(model), title=f"{model.name}: head-to-head composition"))
    for layer in range(model.n_layers):
        for index in range(model.n_heads(layer)):
            for l, ds in mlp_feeds(model, layer, index).items():
                say(f"  head {layer}.{index}'s value reads {', '.join(ds)}, which MLP {l} writes")
    say()


def build() -> dict:
    """Every model the comparison needs: three tracr compiles (~4 s each) and three shipped answers."""
    return {
        "hist": compile_hist(),
        "p18": puzzle("18_histogram"),
        "vowels": compile_frac_prevs("abce", "aeiou", "tracr frac_prevs"),
        "p03": puzzle("03_uniform"),
        "parens": compile_frac_prevs("()", "(", "tracr frac_prevs"),
        "p19": puzzle("19_balanced_parens"),
    }


def report(out, m: dict) -> None:
    """The whole comparison, printed to `out` in 80 columns."""
    head_pair(
        out,
        "RASP hist (tracr, causal) vs puzzle 18: even over BOS and the copies so far",
        m["hist"],
        m["p18"],
        HIST_INPUTS,
    )
    head_pair(
        out,
        "RASP frac_prevs of vowels (tracr) vs puzzle 03: uniform over the prefix",
        m["vowels"],
        m["p03"],
        VOWEL_INPUTS,
        left_head=(1, 0),
    )
    head_pair(
        out,
        "RASP frac_prevs of '(' (tracr) vs puzzle 19's head 0.0 (bal)",
        m["parens"],
        m["p19"],
        PAREN_INPUTS[:1],
        left_head=(1, 0),
        qk=False,
    )
    composition(out, m["parens"])
    composition(out, m["p19"])


def main(argv=None, out=None) -> int:  # argv: none taken, as the seed examples' main(argv)
    try:
        import tracr  # noqa: F401
    except ImportError:
        print('tracr_side_by_side.py: this example needs tracr: pip install -e ".[tracr]"', file=sys.stderr)
        return 2
    report(out or sys.stdout, build())
    return 0


if __name__ == "__main__":
    sys.exit(main())
