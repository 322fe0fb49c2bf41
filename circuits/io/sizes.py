"""How much a model file or a Hugging Face config may ask circuits to hold: the limit, in one place."""

from __future__ import annotations

# The most a model file or a Hugging Face config may ask circuits to hold, counted as float64 arrays
# (GPT-2 medium needs 2.8 GiB). Checked from zip directories, .npy / .safetensors headers and config
# sizes, before any array is read or allocated; raise it here for a larger model. Readers look it up
# as `sizes.MAX_BYTES` when they check, so changing it here (or monkeypatching it) takes effect at once.
MAX_BYTES = 4 * 2**30
MAX_CONFIG_BYTES = 16 * 2**20  # the JSON config inside a file
WHERE = "circuits.io.sizes.MAX_BYTES"  # named in every message that refuses a size


def bytes_text(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"
