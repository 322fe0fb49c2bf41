"""circuits: build transformer circuits by hand and check them.

One public surface: a puzzle file imports everything it needs from here — the vocabulary and named
bases, the model parts, position helpers, `functional`, and the puzzle, its targets and inputs
(re-exported from `circuits.checking`).

Layers (imports run down this list only; tests/test_layers.py holds it):
errors -> model -> io -> checking -> analysis -> display -> grading -> cli / pytest_plugin -> __main__.
"""

from circuits.errors import quiet_interrupt_on_start

quiet_interrupt_on_start()  # only in the `circuits` command: Ctrl-C during these imports is one line, not a traceback

from circuits.checking import (  # noqa: E402
    FILL_ME_IN,
    Copies,
    HeadOutput,
    HeadZ,
    Inputs,
    Puzzle,
    Repeated,
    Residual,
    Runs,
    Target,
    Uniform,
    reference,
)

# the kinds of target, each from its own module: a new kind adds its line here (and its name to __all__), and no
# other list in the package names it (see docs/adding_a_target_kind.md)
from circuits.checking.targets.attention import Attention  # noqa: E402
from circuits.checking.targets.code import Code  # noqa: E402
from circuits.checking.targets.depends import Depends  # noqa: E402
from circuits.checking.targets.mlp import MLPOut, MLPOutput  # noqa: E402
from circuits.checking.targets.next_token import NextToken  # noqa: E402
from circuits.checking.targets.output import Output  # noqa: E402
from circuits.checking.targets.ov import OVCircuit  # noqa: E402
from circuits.checking.targets.patched import PatchedMLP  # noqa: E402
from circuits.checking.targets.structure import Structure  # noqa: E402
from circuits.checking.targets.width import MLPWidth, ValueWidth  # noqa: E402
from circuits.errors import CircuitError, CircuitWarning
from circuits.model import functional
from circuits.model.basis import Basis, NamedMatrix, blank, labelled, names
from circuits.model.positions import (
    one_hot_positions,
    rotation,
    sinusoidal,
    sinusoidal_names,
)
from circuits.model.trace import LayerTrace, Trace
from circuits.model.transformer import MLP, Head, HeadWeights, Layer, LayerNorm, Model
from circuits.model.vocab import Vocab

__all__ = [
    "Basis",
    "NamedMatrix",
    "blank",
    "labelled",
    "names",
    "CircuitError",
    "CircuitWarning",
    "MLP",
    "Head",
    "HeadWeights",
    "Layer",
    "LayerNorm",
    "Model",
    "one_hot_positions",
    "rotation",
    "sinusoidal",
    "sinusoidal_names",
    "LayerTrace",
    "Trace",
    "Vocab",
    "functional",
    # the puzzle API (circuits.checking)
    "FILL_ME_IN",
    "Puzzle",
    "Inputs",
    "Copies",
    "Repeated",
    "Runs",
    "Uniform",
    "reference",
    "Attention",
    "Code",
    "Depends",
    "HeadOutput",
    "HeadZ",
    "MLPOut",
    "MLPOutput",
    "MLPWidth",
    "ValueWidth",
    "NextToken",
    "Output",
    "OVCircuit",
    "PatchedMLP",
    "Residual",
    "Structure",
    "Target",
]
__version__ = "0.1.0"


# --- notebooks: an answer given as values, and results that render as HTML ---------------------------------
# Reports live in circuits.display (rich, HTML), which sits above every class shown here: imported on first use.
def check(puzzle, **values):
    """Check an answer given as values against the shipped puzzle, as a notebook (or Colab) has no puzzle file:
    `circuits.check("consonants", W_Q=..., W_K=..., W_V=..., params=...)`. The result renders as the report."""
    from circuits.display import notebook

    return notebook.check(puzzle, **values)


def hint(puzzle, level: int = 1):
    """The first `level` hints of a shipped puzzle: `circuits.hint("consonants", level=2)`."""
    from circuits.display import notebook

    return notebook.hint(puzzle, level)


def show(puzzle, text: str, **values):
    """The trace of an answer given as values on one input; a notebook shows every head's pattern."""
    from circuits.display import notebook

    return notebook.show(puzzle, text, **values)


def analyze(puzzle, **values):
    """The analysis (circuits, composition, paths) of an answer given as values, rendered as a notebook value."""
    from circuits.display import notebook

    return notebook.analyze(puzzle, **values)


def patterns(trace, heads=None, max_tokens: int = 64, max_inputs: int = 8):
    """Which heads and positions a trace's rendering shows: `circuits.patterns(trace, heads=[(9, 6)])`."""
    from circuits.display import notebook

    return notebook.patterns(trace, heads, max_tokens, max_inputs)


def _repr_html(self):
    """Jupyter asks for HTML: the reprs are attached on first use (display imports rich)."""
    from circuits.display import notebook

    notebook.attach()
    return self._repr_html_()


def _repr_pretty(self, p, cycle):
    from circuits.display import notebook

    notebook.attach()
    self._repr_pretty_(p, cycle)


def _repr(self):
    """`print(result)` and `repr(result)` in a terminal: the compact report, not the dataclass's fields."""
    from circuits.display import notebook

    notebook.attach()
    return self.__repr__()


def _attach_lazily() -> None:
    from circuits.audit.author import AuthorAudit
    from circuits.checking.checker import PuzzleResult

    for cls in (PuzzleResult, AuthorAudit):
        cls._repr_html_, cls._repr_pretty_ = _repr_html, _repr_pretty
    Trace._repr_html_ = _repr_html
    PuzzleResult.__repr__ = Trace.__repr__ = _repr
    Trace._repr_pretty_ = _repr_pretty


_attach_lazily()


# --- tracr's compiled transformers (the [tracr] extra; tracr, jax and haiku are imported on first use) -------------
def from_tracr(assembled, name: str = "tracr", heads=None):
    """A Model with a tracr-compiled transformer's weights, named by tracr's residual labels (circuits.io.tracr)."""
    from circuits.io import tracr

    return tracr.from_tracr(assembled, name, heads)


def tracr_output(model, trace):
    """The compiled program's value at each token of each input of `trace` (circuits.io.tracr)."""
    from circuits.io import tracr

    return tracr.tracr_output(model, trace)


__all__ += ["check", "hint", "show", "analyze", "patterns", "from_tracr", "tracr_output"]
