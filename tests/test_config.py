"""io/config.py: a saved model's config is versioned and checked entry by entry: version 2 names the q·k multiplier
qk_multiplier (version 1's attn_scale is read under its new name) and qk_dtype is one of the model's DTYPES."""

import numpy as np
import pytest

from circuits import CircuitError, Head, Model, Vocab
from circuits.io.config import VERSION, check_config, model_config


def saved():
    model = Model(Vocab.chars_of("ab"), np.eye(2), layers=[[Head(W_Q=np.eye(2), W_K=np.eye(2), W_V=np.eye(2))]])
    return model_config(model)


def test_a_config_reads_back_and_version_1_is_renamed():
    config = saved()
    assert config["version"] == VERSION == 2 and check_config(config, "m.npz")["qk_multiplier"] == 1.0
    old = {**{k: v for k, v in config.items() if k != "qk_multiplier"}, "version": 1, "attn_scale": 2.0}
    assert check_config(old, "m.npz")["qk_multiplier"] == 2.0


def test_a_bad_entry_is_one_line_naming_it():
    config = saved()
    with pytest.raises(CircuitError, match="^m.npz: .*qk_dtype"):
        check_config({**config, "qk_dtype": "float16"}, "m.npz")
    with pytest.raises(CircuitError, match="^m.npz: config version 7 is not supported"):
        check_config({**config, "version": 7}, "m.npz")
