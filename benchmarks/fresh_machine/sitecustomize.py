"""A fresh machine's view of the optional extras: with this folder first on PYTHONPATH, Python (and every process
it starts, which inherits PYTHONPATH) finds none of the [hf], [notebook] and [cluster] extras' packages, as after
`pip install -e ".[dev]"` alone. benchmarks/bench.py times the README's `pytest` this way, so the figure is the
contributor's whatever this machine has installed. Nothing is put in sys.modules: an import fails as for a package
that is not there, and importlib.util.find_spec answers None."""

import importlib.machinery
import sys

HIDDEN = {
    "torch",
    "transformers",
    "safetensors",
    "transformer_lens",
    "nbclient",
    "nbformat",
    "ipykernel",
    "dask",
    "distributed",
}


class _WithoutExtras(importlib.machinery.PathFinder):
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname.partition(".")[0] in HIDDEN:
            return None
        return super().find_spec(fullname, path, target)


sys.meta_path[:] = [_WithoutExtras if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
