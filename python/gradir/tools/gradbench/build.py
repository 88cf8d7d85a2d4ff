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

# How many programs `compiled` has built (cache misses): the protocol warms
# up a closure whose prepare compiled something.
COMPILES = 0


def compiled(text, pipeline=None, function="main"):
    """The compiled `function` of rlx module `text` after `pipeline`
    (an MLIR pass pipeline string, or None), memoized."""
    key = (text, pipeline, function, THREADS)
    with _lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    global COMPILES
    import gradir
    COMPILES += 1
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


class Value:
    """An SSA value of a `Program`: its name and shape (float64 unless `dtype`)."""

    def __init__(self, name, shape, dtype="f64"):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)


class Program:
    """Writes one rlx function as text, op by op, with the types spelled out.

        p = Program()
        x = p.arg((3,))
        y = p.op("rlx.exp", [x], (3,))
        text = p.text([p.op("rlx.sum", [y], ())])
    """

    def __init__(self, name="main", _counter=None):
        self.name, self.args, self.lines = name, [], []
        self._counter = _counter if _counter is not None else [0]

    def _fresh(self):
        self._counter[0] += 1
        return f"%v{self._counter[0]}"

    def block(self):
        """A Program for a region's body (an ``scf.for``): its values get
        names unique in this function; add its ``lines`` where they belong."""
        return Program(self.name, self._counter)

    def value(self, name, shape, dtype="f64"):
        """A Value for a name this Program did not create (a block argument)."""
        return Value(name, shape, dtype)

    def raw(self, line):
        """Appends one line of IR as it is (`scf.for` and other non-rlx ops)."""
        self.lines.append("  " + line)

    def fresh(self):
        """A new SSA name."""
        return self._fresh()

    def arg(self, shape, dtype="f64"):
        v = Value(f"%a{len(self.args)}", shape, dtype)
        self.args.append(v)
        return v

    def op(self, name, operands, shape, attrs="", dtype="f64"):
        """`%r = "name"(operands) {attrs} : (types) -> tensor<shape x dtype>`."""
        r = Value(self._fresh(), shape, dtype)
        ops = ", ".join(o.name for o in operands)
        types = ", ".join(o.type for o in operands)
        attr = f" {{{attrs}}}" if attrs else ""
        self.lines.append(f'  {r.name} = "{name}"({ops}){attr} : ({types}) -> {r.type}')
        return r

    def const(self, value, shape=(), dtype="f64"):
        """A splat `arith.constant` of `value`."""
        r = Value(self._fresh(), shape, dtype)
        lit = repr(float(value)) if dtype.startswith("f") else str(int(value))
        self.lines.append(f"  {r.name} = arith.constant dense<{lit}> : {r.type}")
        return r

    def text(self, results):
        args = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        rtypes = ", ".join(r.type for r in results)
        rnames = ", ".join(r.name for r in results)
        body = "\n".join(self.lines)
        return (f"func.func @{self.name}({args}) -> ({rtypes}) {{\n{body}\n"
                f"  return {rnames} : {rtypes}\n}}\n")


def axes(*a):
    """The attribute text `array<i64: a...>`."""
    return "array<i64: " + ", ".join(str(int(x)) for x in a) + ">"
