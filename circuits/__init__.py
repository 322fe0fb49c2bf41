"""circuits: build transformer circuits by hand and check them.

What a learner imports: the vocabulary and named bases, the model parts,
position helpers, and (from their own modules) the puzzle and checker API.
"""

from .basis import Basis, NamedMatrix, blank, labelled, names
from .errors import CircuitError, CircuitWarning
from .model import MLP, Head, HeadWeights, Layer, LayerNorm, Model
from .positions import one_hot_positions, rotation, sinusoidal, sinusoidal_names
from .trace import LayerTrace, Trace
from .vocab import Vocab

__all__ = [
    "Basis", "NamedMatrix", "blank", "labelled", "names",
    "CircuitError", "CircuitWarning",
    "MLP", "Head", "HeadWeights", "Layer", "LayerNorm", "Model",
    "one_hot_positions", "rotation", "sinusoidal", "sinusoidal_names",
    "LayerTrace", "Trace", "Vocab",
]
__version__ = "0.1.0"
