"""How many threads BLAS may use where circuits runs many small products in a row.

OpenBLAS splits every call across all cores and then spins waiting for work. For loops of
d_head-sized products (composition scores, random baselines) that costs far more than it
gains, and with other threads busy it oversubscribes the cores: one 768 × 64 QR took 2 ms on
one thread and 400 ms on two on a loaded 2-core machine. Inside `one_blas_thread()` BLAS runs
on the calling thread only, so circuits never runs more threads than there are cores.
"""

from __future__ import annotations

import contextlib
import functools


@functools.cache
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread():
    """BLAS on one thread inside the block; the previous limits are restored after it."""
    with _controller().limit(limits=1, user_api="blas"):
        yield


def single_blas_thread(f):
    """`f` run inside `one_blas_thread()`."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        with one_blas_thread():
            return f(*args, **kwargs)

    return wrapper
