"""circuits: build transformer circuits by hand and check them.

One public surface: a puzzle file imports everything it needs from here — the vocabulary and named
bases, the model parts, position helpers, `functional`, and the puzzle, its targets and inputs
(re-exported from `circuits.checking`).

Layers (imports run down this list only; tests/test_layers.py holds it):
errors -> model -> io -> checking -> analysis -> display -> grading -> cli / pytest_plugin.
"""

from circuits.checking import (
    FILL_ME_IN,
    Attention,
    Code,
    Copies,
    HeadOutput,
    HeadZ,
    Inputs,
    MLPOut,
    MLPOutput,
    NextToken,
    Output,
    OVCircuit,
    Puzzle,
    Repeated,
    Residual,
    Runs,
    Structure,
    Target,
    Uniform,
    reference,
)
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
    "Basis", "NamedMatrix", "blank", "labelled", "names",
    "CircuitError", "CircuitWarning",
    "MLP", "Head", "HeadWeights", "Layer", "LayerNorm", "Model",
    "one_hot_positions", "rotation", "sinusoidal", "sinusoidal_names",
    "LayerTrace", "Trace", "Vocab", "functional",
    # the puzzle API (circuits.checking)
    "FILL_ME_IN", "Puzzle", "Inputs", "Copies", "Repeated", "Runs", "Uniform", "reference",
    "Attention", "Code", "HeadOutput", "HeadZ", "MLPOut", "MLPOutput", "NextToken", "Output", "OVCircuit",
    "Residual", "Structure", "Target",
]
__version__ = "0.1.0"


def _trace_repr_html(trace: Trace) -> str:
    """Jupyter shows a trace as HTML; attached here because display sits above the model."""
    from circuits.display.html import trace_html

    return trace_html(trace, standalone=False)


Trace._repr_html_ = _trace_repr_html
