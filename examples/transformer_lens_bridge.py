"""A circuits model in TransformerLens (4.x): saved as a Hugging Face directory, booted as a TransformerBridge.

    python examples/transformer_lens_bridge.py MODEL_FILE DIR    # MODEL_FILE from circuits.io.export.save

Needs the [hf] extra and transformer-lens. The model must have GPT-2's or GPT-Neo's form (what
`circuits.io.hf.to_hf` converts): W_pos, LayerNorms, an MLP in every layer, equal heads filling d_model
(so no separate d_value), no fixed patterns, a W_U without bias; windows only as GPT-Neo's local layers.
TransformerLens 4 removed HookedTransformerConfig; its bridge runs the Hugging Face model unprocessed, so
its logits and patterns equal circuits' up to rounding.
"""

from __future__ import annotations

import sys


def word_tokenizer(vocab):
    """A Hugging Face tokenizer whose ids are the circuits vocabulary's (one token per word)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab.tokens)}, unk_token=vocab.tokens[0]))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok)


def bridge(model, directory, dtype=None):
    """Save `model` to `directory` as Hugging Face files and boot it in TransformerLens (float64 by default)."""
    from pathlib import Path

    import torch
    from transformer_lens.model_bridge import TransformerBridge

    from circuits import CircuitError
    from circuits.io.hf import to_hf

    if Path(directory).exists() and any(Path(directory).iterdir()):  # save_pretrained would write over its files
        raise CircuitError(f"{directory} is not empty; give a new folder for the Hugging Face files")
    to_hf(model).save_pretrained(directory)  # float64, safetensors
    return TransformerBridge.boot_transformers(
        str(directory), dtype=dtype or torch.float64, tokenizer=word_tokenizer(model.vocab)
    )


def main(argv: list[str]) -> int:
    from circuits.io.export import load

    if len(argv) != 2:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    from circuits import CircuitError

    try:
        tl = bridge(load(argv[0]), argv[1])
    except CircuitError as e:
        print(f"transformer_lens_bridge.py: {e}", file=sys.stderr)
        return 2
    print(f"{argv[1]}: {tl.cfg.n_layers} layers, {tl.cfg.n_heads} heads; tl.run_with_cache(tokens) gives its hooks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
