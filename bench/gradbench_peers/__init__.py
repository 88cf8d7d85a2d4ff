"""The peers of bench/gradbench.py: each GradBench eval in JAX and PyTorch,
one module per eval, with the eval's inputs at the sizes the bench runs.

Each module ``<eval>.py`` defines

``workloads(quick) -> [(function, size label, input, first)]``
    in order; ``input`` as GradBench's eval sends it (what gradir's
    ``gradir.tools.gradbench.evals.<eval>.prepare`` takes), at the sizes
    GradBench's eval generates (a few of them, small to large; ``quick``:
    the smallest), ``first``: whether it is the eval's first size;

``jax_peer(function, input)``, ``torch_peer(function, input)``
    a zero-argument closure computing the function's output (what gradir's
    closure returns, as numpy or plain numbers), everything but the
    evaluation itself (input conversion, tracing, index tables) done
    before; ``NotImplementedError`` where the framework cannot do that
    function (the bench's "-");

``NOTES``
    a list of sentences on how the peers are written (where they follow
    GradBench's tools/jax and tools/pytorch, where those lack the eval,
    what is missing and why), which ``--json`` records;

and optionally ``torch_loop`` (``--torch-loops``: PyTorch as GradBench's
tools/pytorch writes it where the default is vectorized) and
``torch_eager`` (``--torch-eager``: a PyTorch peer too slow to run by
default).
"""

import importlib

EVALS = ("hello", "lse", "llsq", "gmm", "det", "lstm", "ode",
         "kmeans", "ba", "ht", "particle", "saddle")


def load(name):
    """The peer module of eval ``name``."""
    if name not in EVALS:
        raise KeyError(f"no peers for eval {name!r}")
    return importlib.import_module(f"{__name__}.{name}")


def jax():
    """(jax, jax.numpy) with float64 enabled."""
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def f64(a):
    """``a`` as a float64 numpy array."""
    import numpy as np
    return np.asarray(a, np.float64)
