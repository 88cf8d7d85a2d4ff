"""Shared by the evals: parse rlx text, differentiate it, compile it for the
CPU, and cache the compiled functions per program text (the text carries
the input shapes, so one cache entry per shape).

    fn = compiled(text, "builtin.module(rlx-gradient{wrt=0})", "main_adjoint")
    value, grad = fn(x)
"""

import threading

_lock = threading.Lock()
_cache = {}

# GradBench runs tools single-threaded unless asked otherwise (its tools'
# --multithreaded flag); protocol.main sets this from the same flag.
THREADS = 1


def compiled(text, pipeline=None, function="main"):
    """The compiled `function` of rlx module `text` after `pipeline`
    (an MLIR pass pipeline string, or None), memoized."""
    key = (text, pipeline, function, THREADS)
    with _lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    import gradir
    module = gradir.parse(text, source_name="gradbench")
    if pipeline:
        gradir.run_pipeline(module, pipeline)
    exe = gradir.compile(module, functions=[function], threads=THREADS)
    fn = exe[function]
    with _lock:
        _cache[key] = (fn, exe)  # the executable owns the code: keep it alive
    return fn, exe


def function(text, pipeline=None, name="main"):
    """Like `compiled`, only the callable."""
    return compiled(text, pipeline, name)[0]


def tensor_type(shape, dtype="f64"):
    """`tensor<2x3xf64>` for shape (2, 3); `tensor<f64>` for ()."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"
