"""io/gpt.py: GPT-2 and GPT-Neo weights in the Hugging Face layout; a config is checked entry by entry, its model_type
first, before any weight is read."""

import pytest

from circuits.errors import CircuitError
from circuits.io.gpt import check_hf_config

GPT2 = {"model_type": "gpt2", "n_embd": 8, "n_head": 2, "n_layer": 1, "vocab_size": 5, "n_positions": 4}


def test_a_small_gpt2_config_is_accepted():
    check_hf_config(GPT2, "config.json")


def test_a_config_is_refused_in_one_line_naming_its_entry():
    cases = [
        ({**GPT2, "model_type": "llama"}, "model_type 'llama' is not supported; circuits imports gpt2 and gpt_neo"),
        ({k: v for k, v in GPT2.items() if k != "n_head"}, "the gpt2 config has no 'n_head'"),
        ({**GPT2, "n_head": 3}, "hidden size 8 is not divisible by 3 heads"),
        ([GPT2], "the config is a JSON"),
    ]
    for config, said in cases:
        with pytest.raises(CircuitError, match=f"^config.json: {said}"):
            check_hf_config(config, "config.json")
