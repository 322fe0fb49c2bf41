"""The io layer's public names in one import: model files, TransformerLens and Hugging Face state dicts."""

from circuits.io.config import (
    CONFIG_KEY,
    FORMAT,
    METADATA_KEY,
    VERSION,
    check_config,
    model_config,
    tl_keys,
)
from circuits.io.files import load, save
from circuits.io.gpt import (
    HF_ACTS,
    TO_HF_ACT,
    check_hf_config,
    from_hf_state_dict,
    neo_attention_layers,
    to_hf_state_dict,
)
from circuits.io.reader import IGNORED_SUFFIXES
from circuits.io.sizes import MAX_CONFIG_BYTES
from circuits.io.transformer_lens import from_tl_state_dict, to_tl_state_dict

__all__ = [
    "CONFIG_KEY",
    "FORMAT",
    "HF_ACTS",
    "IGNORED_SUFFIXES",
    "MAX_CONFIG_BYTES",
    "METADATA_KEY",
    "TO_HF_ACT",
    "VERSION",
    "check_config",
    "check_hf_config",
    "from_hf_state_dict",
    "from_tl_state_dict",
    "load",
    "model_config",
    "neo_attention_layers",
    "save",
    "tl_keys",
    "to_hf_state_dict",
    "to_tl_state_dict",
]
