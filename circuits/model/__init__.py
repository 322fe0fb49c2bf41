"""The model: vocabulary, named residual bases, weights, the numpy forward pass and its trace."""

from circuits.model.transformer import (
    MLP, Head, HeadWeights, Layer, LayerNorm, LayerNormWeights, MLPWeights, Model,
)

__all__ = ["MLP", "Head", "HeadWeights", "Layer", "LayerNorm", "LayerNormWeights", "MLPWeights", "Model"]
