"""Pass speed: rlx-gradient on chains of N dense-tanh layers, on chains
whose values have one user per layer and on models imported from PyTorch,
against TVM Relax's Gradient.

    build/venv/bin/python bench/gradient_pass.py [N ...] [--repeat R] [--profile N]
        [--shared-depths N,N,...] [--models NAME,NAME,...] [--profile-chain dense|residual|shared]
        [--json PATH]

The program (the issue's): x: 4x16, W_i: 16x16, b_i: 16,
``h = tanh(matmul(h, W_i) + b_i)`` N times, then ``sum``: 3N+1 forward ops.
Times ``run_pipeline(m, "builtin.module(rlx-gradient{...})")`` after parsing
(best of R, default 3, and at least 20 for N <= 100, for gradir and TVM
alike; printing excluded; CPU time of this process, which a machine shared
with other jobs disturbs less than wall time) for

- raw: ``simplify=false`` (the gradient and dead-op removal only);
- default: gradient + simplification (rlx-simplify-gradient's patterns,
  rlx-cse, rlx-dce);
- remat=auto: default + ``remat=auto budget=0.5`` (planning included);

side by side with TVM Relax's C++ ``relax.transform.Gradient`` on the same
program, built with Relax's BlockBuilder, in the same run when TVM is
installed (``build/venv/bin/pip install apache-tvm==0.27.0.post1``; not part
of the pinned stack; without it the TVM columns are blank).  Columns:
milliseconds and forward ops per second; ``per-op vs N=100``: time per
forward op of the default pipeline relative to N=100 (1.0 = linear);
``TVM/default``: TVM's time / gradir's default pipeline's (>1: gradir
faster).  ``--profile N`` prints the CPU time of the default pipeline's
phases at depth N (of the chain ``--profile-chain`` names; default dense).

The second table: two chains where one value is read by every layer, at
500, 1000, 2000 and 4000 layers (``--shared-depths``; an empty list leaves
the table out), best of R, gradir and TVM (the same program in Relax):

- residual: x: 4x16, ``h = tanh(h) * c + x`` with ``c`` one splat
  constant (``dense<0.5> : tensor<4x16xf32>``; in Relax a ``relax.const``),
  then ``sum``: 3N+1 forward ops; ``x`` and ``c`` have N users each (the
  shape of every residual network); gradients with respect to x;
- shared: x: 4x16, one w: 16x16, ``h = tanh(matmul(h, w))`` N times, then
  ``sum``: 2N+1 forward ops; ``w`` has N users (and the gradient N
  transposes of it, which rlx-cse merges); gradients with respect to x
  and w.

Columns: milliseconds and forward ops per second of ``simplify=false`` and
of the default pipeline, microseconds per forward op, ``per-op vs
N=500``: the default pipeline's time per op relative to the first depth
(1.0 = linear), then TVM's milliseconds, ops per second and TVM/default.

The third table: models imported from PyTorch by each side's own
importer, float32, the loss (cross_entropy against integer labels)
differentiated with respect to every parameter (``--models``; default
all; ``none`` leaves the table out):

- gradir: ``gradir.frontends.torch.import_module(model, (x, labels))``,
  then ``rlx-gradient{func=main wrt=<the parameters>}`` raw
  (``simplify=false``) and default, timed as above (best of max(R, 5));
- TVM: ``from_exported_program(torch.export.export(model, (x, labels)),
  keep_params_as_input=True, unwrap_unit_return_tuple=True,
  run_ep_decomposition=False)`` (with the default decomposition, aten's
  cross_entropy becomes gather_elements and squeeze, which have no Relax
  gradient), then ``relax.transform.DecomposeOpsForTraining`` (batch_norm
  and layer_norm to mean/variance arithmetic, as gradir's importer does),
  untimed; then ``relax.transform.Gradient("main", require_grads=<the
  parameters>)`` timed (best of max(R, 5)).  Where TVM's importer or its
  Gradient refuses the program, the refusal is in the row and the bench
  goes on.

Models: resnet (bench/cnn.py's CIFAR ResNet step as it stands: BatchNorm in
training mode, batch 32 of 3x32x32); resnet-meanpool (the same modules,
its global average pool written ``h.mean((2, 3))``: TVM has no gradient
for adaptive_avg_pool2d); encoder (bench/transformer.py's pre-norm
``nn.TransformerEncoderLayer(256, 4, 1024)`` + mean + Linear(256, 10),
batch 8 of 128 tokens); encoder-byhand (the same layer's parameters, its
attention written out: in-projection, chunk into q/k/v, softmax(q k^T /
sqrt(64)) v, out-projection: TVM has no gradient for its fused
attention); mlp (784-512-512-10 relu, batch 256: bench/gpu.py's MLP);
resmlp50 and resmlp200 (x: 32x128, a Linear(128, 128), 50 or 200
residual blocks ``h = h + fc2(relu(fc1(h)))`` of 128x128 layers,
Linear(128, 10)).  Forward ops: gradir counts the rlx ops
of the imported ``@main`` (constants, in ``arith.constant``, not counted);
TVM the calls of Relax operators in ``main`` after
DecomposeOpsForTraining (tuple and tuple-item bindings not counted).

``--json PATH`` also writes the tables, with the machine, date, commit and
command, to PATH (bench/results/gradient_pass.json; see bench/_results.py).
"""

from __future__ import annotations

import sys
import time

import _cli  # bench/_cli.py: --help, unknown options
import _results  # bench/_results.py: --json, the results' provenance
import gradir
from gradir import _compat
from gradir.testing.chains import dense_tanh as chain, residual, shared

CHAINS = {"dense": chain, "residual": residual, "shared": shared}
DEPTHS = (10, 100, 1000, 5000)
SHARED_DEPTHS = (500, 1000, 2000, 4000)


def forward_ops(text: str) -> int:
    return text.count('"rlx.')


def gradir_time(text: str, options: str, repeat: int) -> float:
    best = float("inf")
    _compat.push_diagnostic_sink(lambda *d: None)     # remat=auto's budget warnings
    try:
        for _ in range(repeat):
            m = gradir.parse(text)
            t0 = time.process_time()
            gradir.run_pipeline(m, f"builtin.module(rlx-gradient{{{options}}})")
            best = min(best, time.process_time() - t0)
            del m
    finally:
        _compat.pop_diagnostic_sink()
    return best


def tvm_chain(n: int, batch: int = 4, width: int = 16):
    from tvm import relax
    from tvm.script import relax as R
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((batch, width), "float32").as_ty())
    params = []
    for i in range(n):
        params.append(relax.Var(f"w{i}", R.Tensor((width, width), "float32").as_ty()))
        params.append(relax.Var(f"b{i}", R.Tensor((width,), "float32").as_ty()))
    with bb.function("main", [x] + params):
        with bb.dataflow():
            cur = x
            for i in range(n):
                mm = bb.emit(relax.op.matmul(cur, params[2 * i]))
                cur = bb.emit(relax.op.tanh(bb.emit(relax.op.add(mm, params[2 * i + 1]))))
            out = bb.emit_output(relax.op.sum(cur))
        bb.emit_func_output(out)
    return bb.get()


def tvm_residual(n: int, batch: int = 4, width: int = 16):
    """The residual chain in Relax: ``h = tanh(h) * c + x``, c a constant."""
    import numpy as np
    from tvm import relax
    from tvm.script import relax as R
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((batch, width), "float32").as_ty())
    c = relax.const(np.full((batch, width), 0.5, np.float32))
    with bb.function("main", [x]):
        with bb.dataflow():
            cur = x
            for _ in range(n):
                t = bb.emit(relax.op.tanh(cur))
                cur = bb.emit(relax.op.add(bb.emit(relax.op.multiply(t, c)), x))
            out = bb.emit_output(relax.op.sum(cur))
        bb.emit_func_output(out)
    return bb.get()


def tvm_shared(n: int, batch: int = 4, width: int = 16):
    """The shared-weight chain in Relax: ``h = tanh(matmul(h, w))``."""
    from tvm import relax
    from tvm.script import relax as R
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((batch, width), "float32").as_ty())
    w = relax.Var("w", R.Tensor((width, width), "float32").as_ty())
    with bb.function("main", [x, w]):
        with bb.dataflow():
            cur = x
            for _ in range(n):
                cur = bb.emit(relax.op.tanh(bb.emit(relax.op.matmul(cur, w))))
            out = bb.emit_output(relax.op.sum(cur))
        bb.emit_func_output(out)
    return bb.get()


TVM_CHAINS = {"dense": tvm_chain, "residual": tvm_residual, "shared": tvm_shared}


def tvm_version() -> str | None:
    try:
        import tvm
    except ImportError:
        return None
    return tvm.__version__


def tvm_time(n: int, repeat: int, build=tvm_chain):
    """Best CPU time of TVM's Gradient on ``build(n)`` (every argument
    differentiated), or None without TVM."""
    if tvm_version() is None:
        return None
    from tvm import relax
    best = float("inf")
    for _ in range(repeat):
        mod = build(n)
        t0 = time.process_time()
        relax.transform.Gradient("main")(mod)
        best = min(best, time.process_time() - t0)
    return best


def profile(n: int, build=chain) -> None:
    """CPU time of the default pipeline's phases at depth ``n`` of the
    chain ``build`` makes."""
    from gradir.autodiff import gradient
    from gradir.autodiff.simplify import _driver, _mirror
    from gradir.dialects import rlx
    from gradir.transforms import rlx_gradient
    spent: dict[str, float] = {}
    depth = [0]

    def timed(owner, name, label):
        fn = getattr(owner, name)

        def run(*a, **k):
            depth[0] += 1
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                depth[0] -= 1
                spent[label] = spent.get(label, 0.0) + time.process_time() - t0
        setattr(owner, name, run)
        return owner, name, fn

    from gradir.autodiff import checkpoint
    patched = [timed(rlx, "build_op", "  op builders (type inference + create)"),
               timed(gradient, "backward", "gradient: reverse sweep (rules)"),
               timed(rlx_gradient, "differentiate", "gradient: total"),
               timed(_mirror.Mirror, "__init__", "simplify: read the block (mirror)"),
               timed(_driver._Driver, "run", "simplify: patterns (worklist driver)"),
               timed(_driver, "cse", "simplify: rlx-cse"),
               timed(_driver, "dce", "simplify: rlx-dce"),
               timed(_mirror.Mirror, "release", "simplify: freeing the mirror"),
               timed(rlx_gradient, "simplify_function", "simplify: total"),
               timed(checkpoint, "plan_checkpoints", "checkpoint planning")]
    try:
        text = build(n)
        m = gradir.parse(text)
        t0 = time.process_time()
        gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
        total = time.process_time() - t0
    finally:
        for owner, name, fn in patched:
            setattr(owner, name, fn)
    print(f"\nprofile, default pipeline, {build.__name__} N={n} ({forward_ops(text)} forward "
          "ops), CPU seconds:")
    for label, t in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<42} {t:7.3f}  {100 * t / total:5.1f}%")
    print(f"  {'total':<42} {total:7.3f}")


def machine() -> str:
    """The CPU model and the load average (every timing names them)."""
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
    except OSError:
        load = "unknown"
    import os
    return f"{cpu}, {os.cpu_count()} cores, load average {load}"


def tvm_cols(tvm, fwd: int, default: float) -> str:
    return (f"{tvm * 1e3:>9.1f} {fwd / tvm:>7.0f} {tvm / default:>11.2f}"
            if tvm is not None else f"{'-':>9} {'-':>7} {'-':>11}")


def tvm_cells(tvm, fwd: int, default: float) -> list:
    """TVM's ms, ops/s and TVM / default (None without TVM)."""
    if tvm is None:
        return [None, None, None]
    return [tvm * 1e3, fwd / tvm, tvm / default]


def shared_rows(depths: list[int], repeat: int) -> list[list]:
    """The second table's rows: [chain, N, forward ops, raw ms, raw ops/s,
    default ms, default ops/s, us per op, per-op vs the first depth, TVM
    ms, TVM ops/s, TVM / default]."""
    print(f"\n{'chain':<9} {'N':>5} {'fwd ops':>8} | {'raw ms':>9} {'ops/s':>7} | "
          f"{'default ms':>10} {'ops/s':>7} {'us/op':>7} {f'per-op vs N={depths[0]}':>16} | "
          f"{'TVM ms':>9} {'ops/s':>7} {'TVM/default':>11}")
    rows = []
    for name in ("residual", "shared"):
        first = None
        for n in depths:
            text = CHAINS[name](n)
            fwd = forward_ops(text)
            raw = gradir_time(text, "simplify=false", repeat)
            default = gradir_time(text, "", repeat)
            tvm = tvm_time(n, repeat, TVM_CHAINS[name])
            per_op = default / fwd
            first = first or per_op
            rows.append([name, n, fwd, raw * 1e3, fwd / raw, default * 1e3, fwd / default,
                         per_op * 1e6, per_op / first] + tvm_cells(tvm, fwd, default))
            print(f"{name:<9} {n:>5} {fwd:>8} | {raw * 1e3:>9.1f} {fwd / raw:>7.0f} | "
                  f"{default * 1e3:>10.1f} {fwd / default:>7.0f} {per_op * 1e6:>7.1f} "
                  f"{per_op / first:>16.2f} | {tvm_cols(tvm, fwd, default)}", flush=True)
    return rows


# --- the third table: models imported from PyTorch ---------------------------------------

MODELS = ("resnet", "resnet-meanpool", "encoder", "encoder-byhand", "mlp", "resmlp50",
          "resmlp200")
MODEL_NOTES = {
    "resnet": "resnet: bench/cnn.py's build_model as it stands (conv stem, BatchNorm in "
              "training mode, max pool, two basic blocks, adaptive_avg_pool2d, Linear(64, 10)), "
              "cross_entropy; x: 32x3x32x32.",
    "resnet-meanpool": "resnet-meanpool: the same modules, the global average pool written "
                       "h.mean((2, 3)) (TVM has no gradient for adaptive_avg_pool2d).",
    "encoder": "encoder: bench/transformer.py's build_model (nn.TransformerEncoderLayer(256, 4, "
               "1024, dropout=0, batch_first, norm_first) in training mode, mean over the "
               "sequence, Linear(256, 10)), cross_entropy; x: 8x128x256.",
    "encoder-byhand": "encoder-byhand: the same layer's parameters and loss, its self-attention "
                      "written out (linear with in_proj, chunk into q, k, v, softmax(q k^T / 8) "
                      "v over 4 heads, out_proj; TVM's importer fuses torch's into "
                      "relax.nn.attention, which has no gradient); loss equal to encoder's.",
    "mlp": "mlp: 784-512-512-10 with relu (bench/gpu.py's MLP), cross_entropy; x: 256x784.",
    "resmlp50": "resmlp50: Linear(128, 128) stem, 50 blocks h = h + fc2(relu(fc1(h))) of "
                "128x128 layers, Linear(128, 10), cross_entropy; x: 32x128.",
    "resmlp200": "resmlp200: resmlp50 with 200 blocks.",
}


def make_model(name: str):
    """(model, example inputs) of ``name``, seeded."""
    import math
    import os
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    nn = torch.nn
    g = torch.Generator().manual_seed(1)
    if name in ("resnet", "resnet-meanpool"):
        from cnn import build_model          # bench/cnn.py
        net = build_model(torch)
        x, y = torch.randn(32, 3, 32, 32, generator=g), torch.randint(0, 10, (32,), generator=g)
        if name == "resnet":
            return net, (x, y)

        class MeanPool(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, x, y):
                n = self.net
                h = n.pool(torch.relu(n.bn(n.stem(x))))
                h = n.block2(torch.relu(n.down(n.block1(h))))
                return nn.functional.cross_entropy(n.fc(h.mean((2, 3))), y)
        return MeanPool().train(), (x, y)
    if name in ("encoder", "encoder-byhand"):
        import transformer                   # bench/transformer.py
        net = transformer.build_model(torch)
        x, y = torch.randn(8, 128, 256, generator=g), torch.randint(0, 10, (8,), generator=g)
        if name == "encoder":
            return net, (x, y)

        class ByHand(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, x, y):
                layer, head = self.net.layer, self.net.head
                att = layer.self_attn
                b, s, e = x.shape
                heads = att.num_heads
                d = e // heads
                qkv = nn.functional.linear(layer.norm1(x), att.in_proj_weight, att.in_proj_bias)
                q, k, v = (t.reshape(b, s, heads, d).transpose(1, 2) for t in qkv.chunk(3, -1))
                a = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), -1) @ v
                x = x + att.out_proj(a.transpose(1, 2).reshape(b, s, e))
                x = x + layer.linear2(torch.relu(layer.linear1(layer.norm2(x))))
                return nn.functional.cross_entropy(head(x.mean(1)), y)
        return ByHand().train(), (x, y)

    class Loss(nn.Module):
        def __init__(self, body):
            super().__init__()
            self.body = body

        def forward(self, x, y):
            return nn.functional.cross_entropy(self.body(x), y)

    class Block(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(width, width), nn.Linear(width, width)

        def forward(self, h):
            return h + self.fc2(torch.relu(self.fc1(h)))

    torch.manual_seed(0)
    if name == "mlp":
        body = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                             nn.Linear(512, 10))
        x = torch.randn(256, 784, generator=g)
    elif name.startswith("resmlp"):
        blocks = int(name[len("resmlp"):])
        body = nn.Sequential(nn.Linear(128, 128), *[Block(128) for _ in range(blocks)],
                             nn.Linear(128, 10))
        x = torch.randn(32, 128, generator=g)
    else:
        raise ValueError(name)
    return Loss(body).train(), (x, torch.randint(0, 10, (x.shape[0],), generator=g))


def refusal(err: Exception) -> str:
    """A refusal in a few words: TVM's missing gradient, or the error's
    last line."""
    text = str(err).strip()
    marker = "Attribute FPrimalGradient has not been registered for "
    if marker in text:
        return "no gradient for " + text.split(marker, 1)[1].split()[0]
    lines = [ln for ln in text.splitlines() if ln.strip()] or [type(err).__name__]
    return f"{type(err).__name__}: {lines[-1].strip()}"[:200]


def tvm_forward_ops(mod) -> int:
    """Calls of Relax operators in ``main`` (tuples and tuple items not
    counted)."""
    import tvm
    from tvm import relax
    count = [0]

    @relax.expr_functor.visitor
    class Counter(relax.PyExprVisitor):
        def visit_call_(self, call):
            if isinstance(call.op, tvm.ir.Op):
                count[0] += 1
            for arg in call.args:
                self.visit_expr(arg)

    Counter().visit_expr(mod["main"])
    return count[0]


def tvm_model_time(model, args, repeat: int):
    """(TVM forward ops, best CPU time of Gradient, refusal): TVM's import
    of ``model`` and its Gradient with respect to the parameters; (None,
    None, None) without TVM."""
    if tvm_version() is None:
        return None, None, None
    import torch
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program
    try:
        exported = torch.export.export(model, args)
        mod = from_exported_program(exported, keep_params_as_input=True,
                                    unwrap_unit_return_tuple=True, run_ep_decomposition=False)
        mod = relax.transform.DecomposeOpsForTraining()(mod)
    except Exception as err:  # noqa: BLE001 - a refusal is a result: recorded in the row
        return None, None, "import: " + refusal(err)
    fwd = tvm_forward_ops(mod)
    params = list(mod["main"].params[len(args):])
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        try:
            relax.transform.Gradient("main", require_grads=params)(mod)
        except Exception as err:  # noqa: BLE001 - recorded in the row
            return fwd, None, refusal(err)
        best = min(best, time.process_time() - t0)
    return fwd, best, None


def model_rows(names: list[str], repeat: int) -> list[list]:
    """The third table's rows: [model, parameters, gradir forward ops, TVM
    forward ops, raw ms, default ms, TVM ms, TVM / default, TVM refused]."""
    import io
    import contextlib
    from gradir.frontends.torch import import_module
    r = max(repeat, 5)
    print(f"\n{'model':<16} {'params':>6} {'fwd ops':>7} {'TVM ops':>7} | {'raw ms':>9} "
          f"{'default ms':>10} | {'TVM ms':>9} {'TVM/default':>11} | TVM refused")
    rows = []
    for name in names:
        model, args = make_model(name)
        nparams = len(list(model.parameters()))
        with contextlib.redirect_stderr(io.StringIO()):   # torch.export's deprecation warnings
            text = str(import_module(model, args))
            tvm_fwd, tvm, refused = tvm_model_time(model, args, r)
        fwd = forward_ops(text)
        wrt = ",".join(str(i) for i in range(len(args), len(args) + nparams))
        raw = gradir_time(text, f"func=main wrt={wrt} simplify=false", r)
        default = gradir_time(text, f"func=main wrt={wrt}", r)
        ratio = None if tvm is None else tvm / default
        rows.append([name, nparams, fwd, tvm_fwd, raw * 1e3, default * 1e3,
                     None if tvm is None else tvm * 1e3, ratio, refused])
        dash = "-"
        print(f"{name:<16} {nparams:>6} {fwd:>7} {tvm_fwd if tvm_fwd is not None else dash:>7} | "
              f"{raw * 1e3:>9.1f} {default * 1e3:>10.1f} | "
              f"{f'{tvm * 1e3:.1f}' if tvm is not None else dash:>9} "
              f"{f'{ratio:.2f}' if ratio is not None else dash:>11} | {refused or dash}",
              flush=True)
    return rows


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, positional=None,
               valued=("--repeat", "--profile", "--shared-depths", "--models", "--profile-chain",
                       "--json"),
               choices={"--profile-chain": tuple(CHAINS)})
    repeat, prof, depths, prof_chain, path = 3, None, [], "dense", None
    shared_depths, models = list(SHARED_DEPTHS), list(MODELS)
    it = iter(argv)
    for a in it:
        if a == "--repeat":
            repeat = int(next(it))
        elif a == "--profile":
            prof = int(next(it))
        elif a == "--shared-depths":
            shared_depths = [int(d) for d in next(it).split(",") if d]
        elif a == "--models":
            models = [m for m in next(it).split(",") if m and m != "none"]
            unknown = [m for m in models if m not in MODELS]
            if unknown:
                usage = next(ln.strip() for ln in __doc__.splitlines() if "python" in ln)
                _cli._refuse(f"--models: of {', '.join(MODELS)} (or none), not "
                             f"{', '.join(unknown)}", usage)
        elif a == "--profile-chain":
            prof_chain = next(it)
        elif a == "--json":
            path = next(it)
        else:
            depths.append(int(a))
    depths = depths or list(DEPTHS)
    print(f"machine: {machine()}")
    print(f"{'N':>5} {'fwd ops':>8} | {'raw ms':>9} {'ops/s':>7} | {'default ms':>10} "
          f"{'ops/s':>7} {'per-op vs N=100':>15} | {'remat ms':>9} {'ops/s':>7} | "
          f"{'TVM ms':>9} {'ops/s':>7} {'TVM/default':>11}")
    per_op_100 = gradir_time(chain(100), "", max(repeat, 3)) / 301
    dense_rows = []
    for n in depths:
        text = chain(n)
        fwd = 3 * n + 1
        # Milliseconds on a shared machine: more repeats where one is short
        # (the same for gradir and TVM).
        r = repeat if n > 100 else max(repeat, 20)
        raw = gradir_time(text, "simplify=false", r)
        default = gradir_time(text, "", r)
        auto = gradir_time(text, "remat=auto budget=0.5", r)
        tvm = tvm_time(n, r)
        print(f"{n:>5} {fwd:>8} | {raw * 1e3:>9.1f} {fwd / raw:>7.0f} | {default * 1e3:>10.1f} "
              f"{fwd / default:>7.0f} {default / fwd / per_op_100:>15.2f} | "
              f"{auto * 1e3:>9.1f} {fwd / auto:>7.0f} | {tvm_cols(tvm, fwd, default)}",
              flush=True)
        dense_rows.append([n, fwd, raw * 1e3, fwd / raw, default * 1e3, fwd / default,
                           default / fwd / per_op_100, auto * 1e3, fwd / auto]
                          + tvm_cells(tvm, fwd, default))
    chain_rows = shared_rows(shared_depths, repeat) if shared_depths else []
    imported_rows = model_rows(models, repeat) if models else []
    if imported_rows:
        for name in models:
            print("  " + MODEL_NOTES[name])
    print(f"after: {machine()}")
    if prof:
        profile(prof, CHAINS[prof_chain])
    if path:
        tables = [{"title": "rlx-gradient on N dense-tanh layers, against TVM Relax's Gradient",
                   "columns": ["N", "forward ops", "raw ms", "raw ops/s", "default ms",
                               "default ops/s", "per-op vs N=100", "remat=auto ms",
                               "remat=auto ops/s", "TVM ms", "TVM ops/s", "TVM / default"],
                   "formats": [None, None, ".1f", ".0f", ".1f", ".0f", ".2f", ".1f", ".0f",
                               ".1f", ".0f", ".2f"],
                   "rows": dense_rows}]
        if chain_rows:
            tables.append({
                "title": "rlx-gradient on chains that read one value in every layer "
                         "(residual: input and constant; shared: one weight), against TVM "
                         "Relax's Gradient",
                "columns": ["chain", "N", "forward ops", "raw ms", "raw ops/s", "default ms",
                            "default ops/s", "us per op", f"per-op vs N={shared_depths[0]}",
                            "TVM ms", "TVM ops/s", "TVM / default"],
                "formats": [None, None, None, ".1f", ".0f", ".1f", ".0f", ".1f", ".2f",
                            ".1f", ".0f", ".2f"],
                "rows": chain_rows})
        if imported_rows:
            tables.append({
                "title": "rlx-gradient on models imported from PyTorch, against TVM Relax's "
                         "Gradient on its own import of the same model",
                "columns": ["model", "parameters", "gradir forward ops", "TVM forward ops",
                            "raw ms", "default ms", "TVM ms", "TVM / default", "TVM refused"],
                "formats": [None, None, None, None, ".1f", ".1f", ".1f", ".2f", None],
                "rows": imported_rows})
        version = tvm_version()
        notes = ["CPU time of the process (best of "
                 f"{repeat}, at least 20 for N <= 100), parsing and printing excluded; raw: "
                 "simplify=false; default: gradient, rlx-simplify-gradient's patterns, rlx-cse "
                 "and rlx-dce; remat=auto: default + remat=auto budget=0.5.",
                 "TVM: relax.transform.Gradient on the same program (chains: built with "
                 "Relax's BlockBuilder) in the same run"
                 + (f", TVM {version}" if version else "")
                 + " (blank where TVM is not installed); TVM / default > 1: gradir faster."]
        if imported_rows:
            notes += [f"Models (best of {max(repeat, 5)}): each side imports the PyTorch model "
                      "with its own importer and differentiates the loss with respect to every "
                      "parameter; only the gradient pass is timed. gradir: import_module, then "
                      "rlx-gradient{func=main wrt=<parameters>} raw and default. TVM: "
                      "from_exported_program(torch.export.export(model, (x, labels)), "
                      "keep_params_as_input=True, unwrap_unit_return_tuple=True, "
                      "run_ep_decomposition=False) and DecomposeOpsForTraining (untimed), then "
                      "Gradient('main', require_grads=<parameters>). Forward ops: gradir the rlx "
                      "ops of the imported @main (constants not counted); TVM the calls of Relax "
                      "operators in main after DecomposeOpsForTraining. TVM refused: the op "
                      "TVM's Gradient has no gradient for (or the refusal's last line)."]
            notes += [MODEL_NOTES[name] for name in models]
        _results.save_results(path, "gradient_pass", tables, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
