"""GradBench evals implemented with gradir, one module per eval.

Each module ``evals/<name>.py`` defines

``FUNCTIONS: tuple[str, ...]``
    the eval's function names, e.g. ``("primal", "gradient")``;

``prepare(function: str, input) -> Callable[[], object]``
    builds and compiles what ``function`` needs for ``input`` (the
    JSON-decoded ``input`` of the evaluate message), cached per input shape,
    and returns a zero-argument closure computing the function's output.
    The output is JSON-able; numpy arrays and numpy scalars are allowed and
    are converted to lists and numbers after the timed runs. Input
    conversion (JSON lists to numpy) belongs in ``prepare``, outside the
    timed closure. Programs compile through ``..build.compiled``, whose
    cache (and compile count, which decides the protocol's warmup call)
    is shared by all evals.

Modules load lazily: ``load(name)`` imports one on first use.
"""

import importlib

EVALS = ("hello", "lse", "llsq", "gmm", "det", "lstm", "ode",
         "kmeans", "ba", "ht", "particle", "saddle")


def load(name):
    """The module implementing eval `name`; KeyError if gradir has none."""
    if name not in EVALS:
        raise KeyError(f"no gradir implementation of eval {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
