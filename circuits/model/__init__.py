"""The model: vocabulary, named residual bases, specs, weights, the numpy forward pass and its trace."""

from circuits.model.blocks import HeadWeights, LayerNormWeights, MLPWeights
from circuits.model.specs import MLP, Head, Layer, LayerNorm
from circuits.model.transformer import Model

__all__ = ["MLP", "Head", "HeadWeights", "Layer", "LayerNorm", "LayerNormWeights", "MLPWeights", "Model"]
