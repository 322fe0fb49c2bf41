"""Hugging Face GPT-2 and GPT-Neo as circuits models, with the seeds' experiments (needs the [hf] extra).

    from circuits.io.hf import from_hf
    model = from_hf("path/to/gpt2")         # a local directory, or a model object; nothing is downloaded

Weights come over unprocessed (no LayerNorm folding, no centring), so a circuits Trace holds the
same numbers as the Hugging Face forward pass: within 1e-10 for GPT-2 in float64, and within
about 1e-6 for GPT-Neo, which computes q·k and its softmax in float32 whatever the model's dtype.
torch and transformers are imported inside the functions that need them.
"""

from __future__ import annotations

import json
import os
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from circuits.errors import CircuitError, CircuitWarning
from circuits.io import gpt, sizes
from circuits.io.reader import IGNORED_SUFFIXES
from circuits.model.trace import Trace
from circuits.model.transformer import Model

INSTALL = 'pip install "circuits-workbench[hf]"'


def _require(*modules: str):
    """Import the extra's modules, or say in one line how to install them."""
    import importlib

    out = []
    for name in modules:
        try:
            out.append(importlib.import_module(name))
        except ImportError:
            raise CircuitError(f"real models need {name}, which is not installed: {INSTALL}") from None
    return out[0] if len(out) == 1 else out


def load_hf(path_or_name: str | os.PathLike):
    """A GPT-2 / GPT-Neo model object from a local directory, or a name already in the local HF cache."""
    transformers = _require("torch", "transformers")[1]
    where = str(path_or_name)
    if not Path(where).is_dir() and Path(where).exists():
        raise CircuitError(f"{where} is a file; give the directory that holds config.json and the weights")
    if (Path(where) / "config.json").is_file():
        check_config_file(Path(where) / "config.json")  # before transformers builds a model from it
    try:
        with _quiet(transformers):
            return transformers.AutoModelForCausalLM.from_pretrained(
                where, local_files_only=True, attn_implementation="eager"
            )
    except (OSError, ValueError) as e:
        raise CircuitError(
            f"no local model at {where!r} ({_first_line(e)[:160]}); circuits never downloads: "
            'save one with save_pretrained first (README, "Real models")'
        ) from None
    except Exception as e:  # noqa: BLE001 - transformers' and huggingface_hub's own errors for configs and weights it cannot use
        said = " ".join(str(e).split()) or type(e).__name__
        raise CircuitError(f"{where}: transformers cannot build the model ({said[:300]})") from None


def check_config_file(path: Path) -> dict:
    """config.json of a local GPT-2 / GPT-Neo directory, read and checked by circuits before transformers sees it."""
    if path.stat().st_size > sizes.MAX_CONFIG_BYTES:
        raise CircuitError(f"{path}: {path.stat().st_size:,} bytes is too large for a model config")
    data = path.read_bytes()
    try:
        config = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise CircuitError(f"{path}: not utf-8 text (byte {data[e.start]:#04x} at position {e.start})") from None
    except json.JSONDecodeError as e:
        raise CircuitError(f"{path}: not valid JSON ({e.msg} at character {e.pos})") from None
    except RecursionError:
        raise CircuitError(f"{path}: nests too deeply to be a model config") from None
    gpt.check_hf_config(config, str(path))
    return config


@contextmanager
def _quiet(transformers):
    """Silence transformers' config warnings and progress bars: a circuits command prints one line or its result."""
    logging = transformers.utils.logging
    verbosity, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def load_tokenizer(path_or_name: str | os.PathLike, required: bool = True, n_vocab: int | None = None):
    """The tokenizer saved beside a local model (None if there is none and not `required`).

    With `n_vocab`, it must name every token id of the model: transformers returns a one-token
    tokenizer for a directory without tokenizer files, which would silently mislabel every token.
    Such a tokenizer is an error if `required`, else a warning and None (tokens named t0, t1, …).
    """
    transformers = _require("transformers")
    try:
        with _quiet(transformers):
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(path_or_name), local_files_only=True)
    except (OSError, ValueError, TypeError) as e:
        if required:
            raise CircuitError(
                f"no local tokenizer at {str(path_or_name)!r} ({str(e).splitlines()[0][:160]})"
            ) from None
        return None
    short = None if n_vocab is None else _uncovered(tokenizer, n_vocab, f"the tokenizer at {str(path_or_name)!r}")
    if short and required:
        raise CircuitError(f"{short}: save the model's own tokenizer beside it")
    if short:
        warnings.warn(
            CircuitWarning(f"{short}, so it is not this model's: tokens are named t0, t1, … instead"), stacklevel=2
        )
        return None
    return tokenizer


def _uncovered(tokenizer, n_vocab: int, what: str) -> str | None:
    """None if `tokenizer` names every id below n_vocab, else a sentence saying how many it names."""
    named = sum(t is not None for t in tokenizer.convert_ids_to_tokens(list(range(n_vocab))))
    return None if named == n_vocab else f"{what} names {named:,} of the model's {n_vocab:,} token ids"


def from_hf(model_or_path, tokenizer=None, qk_dtype: str = "float64", dtype: str = "float64") -> Model:
    """A circuits Model with the exact weights of a HF GPT2LMHeadModel / GPTNeoForCausalLM (or their base models).

    `model_or_path` is a model object or a local directory (or a name in the local cache).
    The vocabulary takes its token names from `tokenizer` (or the one saved with the model);
    without one, tokens are named "t0", "t1", …. Hugging Face's GPT-Neo rounds q and k to float32
    and takes q·k in float32 even in a float64 model: `qk_dtype="float32"` does the same, so its
    attention patterns match to float64 rounding; the default computes q·k exactly in float64.
    `dtype="float32"` runs the whole forward pass in float32, as HF's default float32 model does.
    """
    _require("torch", "transformers")
    hf_model = model_or_path
    if isinstance(model_or_path, (str, os.PathLike)):
        hf_model = load_hf(model_or_path)
        if tokenizer is None:
            n_vocab = getattr(getattr(hf_model, "config", None), "vocab_size", None)
            tokenizer = load_tokenizer(model_or_path, required=False, n_vocab=n_vocab)
    elif tokenizer is not None and hasattr(hf_model, "config"):
        short = _uncovered(tokenizer, int(hf_model.config.vocab_size), "the tokenizer given")
        if short:
            raise CircuitError(f"{short}: pass the model's own tokenizer, or none (tokens t0, t1, …)")
    if not hasattr(hf_model, "state_dict") or not hasattr(hf_model, "config"):
        raise CircuitError(f"from_hf needs a Hugging Face model or a directory, not {type(hf_model).__name__}")
    config = hf_model.config.to_dict()
    name = config.get("_name_or_path") or (str(model_or_path) if not hasattr(model_or_path, "config") else None)
    source = name or str(config.get("model_type", "the model"))
    gpt.check_hf_config(config, source)  # before a float64 copy of every weight is made
    state = {k: v.detach().cpu().double().numpy() for k, v in hf_model.state_dict().items()}
    V = int(config["vocab_size"])
    tokens = vocab_tokens(tokenizer, V) if tokenizer is not None else None
    bos = getattr(tokenizer, "bos_token", None) if tokenizer is not None else None
    return gpt.from_hf_state_dict(
        state, config, tokens=tokens, bos=bos, name=name, source=source, qk_dtype=qk_dtype, dtype=dtype
    )


def vocab_tokens(tokenizer, n_vocab: int) -> list[str]:
    """Token names for ids 0..n_vocab−1 (the tokenizer's own spelling, e.g. "Ġthe" for " the")."""
    return [
        t if t is not None else f"<id:{i}>" for i, t in enumerate(tokenizer.convert_ids_to_tokens(list(range(n_vocab))))
    ]


def to_hf(model: Model, arch: str | None = None, dtype=None):
    """The circuits model as a HF GPT2LMHeadModel / GPTNeoForCausalLM (float64 unless `dtype`), eval mode."""
    torch, transformers = _require("torch", "transformers")
    state, config = gpt.to_hf_state_dict(model, arch)
    kind = config.pop("model_type")
    cls = {
        "gpt2": (transformers.GPT2Config, transformers.GPT2LMHeadModel),
        "gpt_neo": (transformers.GPTNeoConfig, transformers.GPTNeoForCausalLM),
    }[kind]
    hf_config = cls[0](**config, attn_implementation="eager")
    hf_model = cls[1](hf_config).to(dtype or torch.float64).eval()
    # np.array copies: the state dict may hold the model's own read-only arrays, which torch must not share.
    missing, unexpected = hf_model.load_state_dict(
        {k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=False
    )
    missing = [k for k in missing if not k.endswith(IGNORED_SUFFIXES)]
    if missing or unexpected:
        raise CircuitError(f"the {kind} state dict does not fit: missing {missing[:3]}, unexpected {unexpected[:3]}")
    return hf_model


# --- the seeds' experiments -------------------------------------------------------------------
def encode(tokenizer, text: str, bos: bool = True) -> np.ndarray:  # -> [1, T]
    """Token ids of `text` with the BOS token in front (seed 000: `tokenizer.bos_token + sentence`)."""
    prefix = tokenizer.bos_token if bos and tokenizer.bos_token else ""
    return np.asarray(tokenizer(prefix + text)["input_ids"], dtype=np.int64)[None]


def token_strings(tokenizer, ids: np.ndarray) -> list[str]:
    """Readable tokens of one input [T], as seed 000 prints them (batch_decode, spaces kept)."""
    return tokenizer.batch_decode([[int(i)] for i in np.ravel(ids)], clean_up_tokenization_spaces=False)


def repeated_random_tokens(
    seed: int = 2025, seq_len: int = 20, high: int = 100, bos_id: int | None = None, low: int = 0
) -> np.ndarray:  # -> [1, (1 +) 2·seq_len]
    """Seed 000's input: torch.manual_seed(seed), seq_len random ids in [low, high), repeated, BOS in front."""
    torch = _require("torch")
    torch.manual_seed(seed)
    random_tokens = torch.randint(low=low, high=high, size=(1, seq_len))
    tokens = torch.cat([random_tokens, random_tokens], dim=1)  # [1, 2·seq_len]
    if bos_id is not None:
        tokens = torch.cat([torch.tensor([[int(bos_id)]]), tokens], dim=1)  # [1, 1 + 2·seq_len]
    return tokens.numpy().astype(np.int64)


@dataclass(frozen=True)
class HalvesLogprob:
    """Log-probs of each correct next token over a repeated sequence: the series and each half's mean."""

    series: np.ndarray  # [T − 1]: series[i] = log p(token i+1 | tokens ≤ i)
    first_half: float
    second_half: float


def next_token_logprobs(trace: Trace, n: int = 0) -> np.ndarray:  # -> [T − 1]
    """log p(correct next token) at each position of input n."""
    if trace.logprobs is None:
        raise CircuitError("the model has no W_U, so the trace has no log-probs")
    T = int(trace.valid[n].sum())
    ids = trace.ids[n, :T]
    return trace.logprobs[n, np.arange(T - 1), ids[1:]]  # [T − 1]


def halves_logprob(trace: Trace, seq_len: int, n: int = 0) -> HalvesLogprob:
    """Seed 000, exercise 1.10: mean log-prob on the first and the second copy of a repeated sequence.

    With BOS + 2·seq_len tokens the series has 2·seq_len entries; the first seq_len predict the
    first copy (from BOS on), the rest the second copy, which an induction head can copy.
    """
    series = next_token_logprobs(trace, n)
    if len(series) < seq_len + 1:
        raise CircuitError(f"input {n} has {len(series) + 1} tokens, too few for two halves of seq_len = {seq_len}")
    return HalvesLogprob(series, float(series[:seq_len].mean()), float(series[seq_len:].mean()))
