"""The driver: ``torch.export`` graph -> a function of rlx ops.

``import_module`` exports the model, detaches the results of its
``torch.no_grad()`` regions (``_detach_no_grad_regions``), functionalizes the graph without
decomposing it (``run_decompositions({})``: in-place ops become functional,
``nn`` layers stay whole, so ``aten.layer_norm`` becomes ``rlx.layer_norm``
rather than a dozen arithmetic ops), then walks the nodes that the user
outputs depend on, in graph order, and calls the mapping of each aten op
(``ops.OPS``) through an ``Emitter``.

Values in the walk are ``ir.Value`` (run-time tensors: inputs, parameters
and what depends on them), ``torch.Tensor`` (constants: buffers, lifted
tensors and everything computed from constants alone, which is folded by
running the aten op in PyTorch at import time), Python scalars, lists of
those (multi-result ops), or ``Unavailable`` (a result of a mapped op that
rlx does not compute, such as the running statistics of a BatchNorm: an error
if used).  Every mapped result is checked against the shape and dtype that
``torch.export`` recorded for the node.
"""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
from mlir import ir
from mlir.dialects import arith, func

from gradir.dialects import ShapeError, rlx
from gradir.ir import make_context

from .errors import TorchImportError, UnsupportedOpError
from .ops import OPS
from .ops._helpers import Unavailable

__all__ = ["import_module", "import_program", "mutated_buffers", "mutated_inputs",
           "buffer_arguments", "Emitter", "Unavailable", "IR_DTYPES"]

# torch dtype name -> MLIR element type spelling
IR_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
             "int64": "i64", "int32": "i32", "bool": "i1"}
_FROM_IR = {v: k for k, v in IR_DTYPES.items()}

_RANDOM = ("a random op (PyTorch draws new values at each call; an imported program is "
           "deterministic): dropout, stochastic depth (torchvision's StochasticDepth) and "
           "random masks in training mode; import the model in eval mode (model.eval()) or "
           "with their probability 0")

_GRADIR_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)\n(?P<code>[^\n]*)')


def import_module(model, example_args, example_kwargs=None, *, func_name="main", context=None,
                  buffers=False, input_mutations=False):
    return import_program(model, example_args, example_kwargs, func_name=func_name,
                          context=context, buffers=buffers, input_mutations=input_mutations)[0]


def import_program(model, example_args, example_kwargs=None, *, func_name="main", context=None,
                   buffers=False, input_mutations=False):
    """``import_module``, also returning the ``torch.export.ExportedProgram``
    (its ``call_spec.out_spec`` rebuilds the model's output structure).

    ``buffers=True``: the model's floating-point buffers and those the
    forward mutates are not constants but arguments of ``@main`` after the
    parameters, in ``model.named_buffers()`` order (``buffer_arguments(model,
    exported)`` names them; other buffers, such as integer position ids,
    stay constants), and the new values of the mutated buffers (BatchNorm's
    running statistics and ``num_batches_tracked`` in training mode) are
    results after the outputs, in the same order (``mutated_buffers(model,
    exported)``).

    ``input_mutations=True``: the new values of the inputs the forward
    mutates in place (a ``torch.compile`` graph's lifted buffers, such as
    BatchNorm's running statistics) are results after the outputs and before
    the mutated buffers, in input order (``mutated_inputs(exported)`` gives
    their positions)."""
    import torch

    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    if not isinstance(model, torch.nn.Module):
        raise TorchImportError(f"expected a torch.nn.Module, got {type(model).__name__}")
    with warnings.catch_warnings():
        # torch.export's own deprecation notices (pytree internals)
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", message=".*were assigned during export")  # nn.RNN
        try:
            exported = torch.export.export(model, tuple(example_args), kwargs=example_kwargs)
        except Exception as err:  # torch's own message says what failed to trace
            raise TorchImportError(f"torch.export failed: {err}") from err
        _detach_no_grad_regions(torch, exported.graph_module)
        exported = exported.run_decompositions({})
        exported = _decompose_unmapped(torch, exported)
    module = _Importer(torch, model, exported, context or make_context(),
                       buffers, input_mutations).run(func_name)
    return module, exported


def _unmapped(torch, exported) -> set:
    """The aten ops of ``exported`` with no mapping in ``OPS`` that depend
    on an input (ops of constants alone are folded) and are not random."""
    dynamic, ops = set(), set()
    for node in exported.graph.nodes:
        if node.op == "placeholder":
            dynamic.add(node)
        elif node.op == "call_function" and any(a in dynamic for a in node.all_input_nodes):
            dynamic.add(node)
            target = node.target
            if (isinstance(target, torch._ops.OpOverload) and str(target) not in OPS
                    and torch.Tag.nondeterministic_seeded not in target.tags):
                ops.add(target)
    return ops


def _decomposition(torch, op):
    from torch._decomp import decomposition_table
    fn = decomposition_table.get(op)
    if fn is None and torch._C._dispatch_has_kernel_for_dispatch_key(
            op.name(), "CompositeImplicitAutograd"):
        fn = op.decompose
    return fn


def _decompose_unmapped(torch, exported, rounds=3):
    """Each aten op with no mapping (``F.pad``, ``F.mish``, ``kl_div``,
    ``pixel_shuffle``, ``torch.flip``, ...) that PyTorch's own
    decompositions (``torch._decomp``, or its CompositeImplicitAutograd
    kernel) turn into mapped ops, within ``rounds`` rounds, is decomposed
    so.  Ops whose decomposition still needs an unmapped op are left whole,
    so that the error names the op the model called."""
    before = _unmapped(torch, exported)
    for op in sorted(before, key=str):
        todo, trial = {op}, exported
        for _ in range(rounds):
            table = {o: _decomposition(torch, o) for o in todo}
            if any(fn is None for fn in table.values()):
                break
            try:
                trial = trial.run_decompositions(table)
            except Exception:  # a decomposition that does not apply here
                break
            todo = _unmapped(torch, trial) - (before - {op})
            if not todo:
                exported = trial
                break
    return exported


def _buffer_names(model, targets):
    """Canonical (``named_buffers()``) names of buffer ``targets``."""
    by_id = {id(b): name for name, b in model.named_buffers()}
    return [by_id.get(id(model.get_buffer(t)), t) for t in targets]


def mutated_buffers(model, exported) -> list[str]:
    """The buffers whose new values ``@main`` returns after the outputs when
    imported with ``buffers=True``, in that order (``named_buffers()``
    names)."""
    mutated = set(_buffer_names(model, exported.graph_signature.buffers_to_mutate.values()))
    return [name for name, _ in model.named_buffers() if name in mutated]


def _user_tensor_inputs(exported) -> list[str]:
    from torch.export.graph_signature import InputKind, TensorArgument
    return [s.arg.name for s in exported.graph_signature.input_specs
            if s.kind == InputKind.USER_INPUT and isinstance(s.arg, TensorArgument)]


def mutated_inputs(exported) -> list[int]:
    """The positions, among the tensor inputs of ``@main``, of the inputs
    the forward mutates in place: ``@main`` returns their new values after
    the outputs when imported with ``input_mutations=True``."""
    targets = set(exported.graph_signature.user_inputs_to_mutate.values())
    return [i for i, name in enumerate(_user_tensor_inputs(exported)) if name in targets]


def buffer_arguments(model, exported) -> list[str]:
    """The buffers that are arguments of ``@main`` after the parameters when
    imported with ``buffers=True``, in that order: the floating-point ones
    and the mutated ones."""
    mutated = set(mutated_buffers(model, exported))
    return [name for name, b in model.named_buffers()
            if b.dtype.is_floating_point or name in mutated]


def _detach_no_grad_regions(torch, gm) -> None:
    """Makes the values computed under ``torch.no_grad()`` (or
    ``set_grad_enabled(False)``) and those detached in place carry no
    gradient.  torch.export keeps a no-grad region as a
    ``wrap_with_set_grad_enabled(False, submodule, *inputs)`` call, which
    ``run_decompositions`` inlines and forgets: each of its results that
    carries no gradient in PyTorch gets an ``aten.detach`` (imported as
    ``grad.no_grad``) before that.  ``run_decompositions`` also drops
    ``t.detach_()``: it becomes ``aten.detach``, and the uses of ``t`` after
    it use its result."""
    hop = getattr(torch.ops.higher_order, "wrap_with_set_grad_enabled", None)
    getitem = __import__("operator").getitem
    changed = False
    for node in list(gm.graph.nodes):
        if node.op != "call_function":
            continue
        if node.target is torch.ops.aten.detach_.default:
            node.target = torch.ops.aten.detach.default
            order = {n: i for i, n in enumerate(gm.graph.nodes)}
            node.args[0].replace_all_uses_with(node,
                                               delete_user_cb=lambda u: order[u] > order[node])
            changed = True
            continue
        if hop is None or node.target is not hop:
            continue
        sub = getattr(gm, node.args[1].target)
        _detach_no_grad_regions(torch, sub)
        if node.args[0]:
            continue
        keeps = _keeps_gradient(torch, sub, node.args[2:])
        for user in list(node.users):
            if user.target is not getitem or keeps(user):
                continue
            with gm.graph.inserting_after(user):
                det = gm.graph.call_function(torch.ops.aten.detach.default, (user,))
            det.meta = dict(user.meta)
            user.replace_all_uses_with(det, delete_user_cb=lambda u: u is not det)
            changed = True
    if changed:
        gm.recompile()


def _keeps_gradient(torch, sub, inputs):
    """Which results of no-grad region ``sub`` still carry a gradient in
    PyTorch: those that are one of its inputs, returned as is by an op
    (``x.contiguous()``, ``x.to(x.dtype)``).  Views made in the region carry
    none, like every computed value.  Found by running ``sub`` on fake
    tensors, as torch.export traced it (where that fails, none is kept).  A
    predicate on the region's ``getitem`` nodes."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    try:
        with FakeTensorMode(), torch.no_grad():
            probes = []
            for n in inputs:
                val = n.meta.get("val") if hasattr(n, "meta") else n
                if isinstance(val, torch.Tensor):
                    val = torch.empty(tuple(int(d) for d in val.shape), dtype=val.dtype)
                probes.append(val)
            outs = sub(*probes)
        kept = [any(o is p for p in probes) for o in outs]
        return lambda item: kept[item.args[1]]
    except Exception:
        return lambda item: False


def _user_frame(node, torch_dir: str):
    """(file, line, function, code) of the model's source line for ``node``:
    the innermost frame of its stack trace outside PyTorch's sources, else
    the innermost one (a torch.nn layer's).  torch.export also records the
    frame that called it (in gradir): frames up to it are dropped.  None
    without a trace."""
    trace = node.meta.get("stack_trace") or ""
    frames = [m.groupdict() for m in _FRAME.finditer(trace)]
    for i in range(len(frames) - 1, -1, -1):
        if os.path.abspath(frames[i]["file"]).startswith(_GRADIR_DIR):
            frames = frames[i + 1:]
            break
    if not frames:
        return None
    outside = [f for f in frames if not os.path.abspath(f["file"]).startswith(torch_dir)]
    f = (outside or frames)[-1]
    return f["file"], int(f["line"]), f["fn"], f["code"].strip()


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _leaves(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from _leaves(y)
    else:
        yield x


class Emitter:
    """What an op mapping sees: the node being imported, its expected result
    (``out``: torch.export's fake tensor), constant and cast helpers, and
    ``error`` to refuse.  Builders run at the right insertion point and
    location already."""

    def __init__(self, torch, context):
        self.torch = torch
        self.context = context
        self.node = None
        self.op = ""
        self._consts: dict = {}
        self._torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep

    # --- the node ----------------------------------------------------------

    @property
    def out(self):
        return self.node.meta.get("val")

    @property
    def _first_out(self):
        out = self.out
        return out[0] if isinstance(out, (list, tuple)) else out

    @property
    def out_shape(self) -> list[int]:
        """The (first) result's shape."""
        return [int(d) for d in self._first_out.shape]

    @property
    def out_dtype(self):
        """The (first) result's torch dtype."""
        return self._first_out.dtype

    def frame(self, node=None):
        return _user_frame(node or self.node, self._torch_dir)

    def error(self, reason: str, node=None) -> UnsupportedOpError:
        node = node or self.node
        op = str(node.target) if node is not None else "?"
        frame = self.frame(node) if node is not None else None
        source = code = None
        if frame:
            source, code = f"{frame[0]}:{frame[1]} in {frame[2]}", frame[3]
        stack = node.meta.get("nn_module_stack") if node is not None else None
        module_path = None
        if stack:
            path, cls = list(stack.values())[-1]
            if path:
                module_path = f"{path} ({cls.rsplit('.', 1)[-1]})"
        return UnsupportedOpError(op, reason, source, code, module_path)

    # --- types -------------------------------------------------------------

    def ir_type(self, dtype) -> ir.Type:
        name = str(dtype).replace("torch.", "")
        if name not in IR_DTYPES:
            raise self.error(f"element type {name} has no rlx equivalent "
                             f"(rlx: {', '.join(IR_DTYPES)})")
        return ir.Type.parse(IR_DTYPES[name])

    def tensor_type(self, shape, dtype) -> ir.RankedTensorType:
        return ir.RankedTensorType.get([int(d) for d in shape], self.ir_type(dtype))

    def dtype(self, x):
        """The torch dtype of a Value, constant tensor or Python scalar."""
        if isinstance(x, ir.Value):
            return getattr(self.torch, _FROM_IR[str(x.type.element_type)])
        if isinstance(x, self.torch.Tensor):
            return x.dtype
        if isinstance(x, bool):
            return self.torch.bool
        if isinstance(x, int):
            return self.torch.int64
        if isinstance(x, float):
            return self.torch.get_default_dtype()
        raise self.error(f"unexpected operand {x!r}")

    def shape(self, x) -> list[int]:
        if isinstance(x, ir.Value):
            return [int(d) for d in x.type.shape]
        if isinstance(x, self.torch.Tensor):
            return list(x.shape)
        return []

    def rank(self, x) -> int:
        return len(self.shape(x))

    def result_type(self, *xs):
        """torch's type promotion over Values, constants and scalars."""
        t = self.torch
        probes = []
        for x in xs:
            if isinstance(x, (ir.Value, t.Tensor)):
                probes.append(t.empty((0,) * self.rank(x), dtype=self.dtype(x)))
            else:
                probes.append(x)
        out = probes[0]
        dtype = None
        for p in probes[1:]:
            dtype = t.result_type(out, p)
            out = t.empty((0,) * max(getattr(out, "ndim", 0), getattr(p, "ndim", 0)),
                          dtype=dtype)
        return dtype if dtype is not None else self.dtype(xs[0])

    @staticmethod
    def is_value(x) -> bool:
        return isinstance(x, ir.Value)

    # --- values ------------------------------------------------------------

    def value(self, x, dtype=None) -> ir.Value:
        """``x`` as an ``ir.Value`` of element type ``dtype`` (default: its
        own): Values are cast with ``rlx.astype``, constants and scalars
        become ``arith.constant``s."""
        t = self.torch
        if isinstance(x, ir.Value):
            if dtype is not None and self.dtype(x) != dtype:
                return rlx.astype(x, self.ir_type(dtype))
            return x
        if isinstance(x, t.Tensor):
            return self.const(x, dtype)
        if isinstance(x, (bool, int, float)):
            return self.const(t.tensor(x, dtype=dtype or self.dtype(x)))
        if isinstance(x, Unavailable):
            raise self.error(f"uses a result of {x.op} that is not imported: {x.reason}")
        raise self.error(f"unexpected operand {x!r}")

    def const(self, x, dtype=None) -> ir.Value:
        """An ``arith.constant`` holding tensor (or array) ``x`` (splats stay
        small); cached per tensor and dtype."""
        t = self.torch
        tensor = x if isinstance(x, t.Tensor) else t.as_tensor(np.asarray(x))
        if dtype is not None and tensor.dtype != dtype:
            tensor = tensor.to(dtype)
        key = (id(x), str(tensor.dtype))
        hit = self._consts.get(key)
        if hit is not None and hit[0] is x:
            return hit[1]
        ttype = self.tensor_type(tensor.shape, tensor.dtype)
        tensor = tensor.detach().cpu().contiguous()
        if tensor.dtype == t.bfloat16:
            # numpy has no bf16: the values' bits, as a bf16 attribute
            arr = tensor.view(t.int16).numpy().view(np.uint16)
        else:
            arr = tensor.numpy()
        flat = arr.reshape(-1)
        if flat.size > 1 and bool((flat == flat[0]).all()):
            elt = ttype.element_type
            if tensor.dtype.is_floating_point:
                scalar = ir.FloatAttr.get(elt, float(tensor.reshape(-1)[0]))
            else:
                scalar = ir.IntegerAttr.get(elt, int(flat[0]))
            attr = ir.DenseElementsAttr.get_splat(ttype, scalar)
        elif arr.dtype == np.bool_:
            attr = ir.DenseElementsAttr.get(np.ascontiguousarray(arr))
        else:
            attr = ir.DenseElementsAttr.get(np.ascontiguousarray(arr), type=ttype)
        value = arith.ConstantOp(ttype, attr).result
        self._consts[key] = (x, value)
        return value

    def scalar(self, v, dtype) -> ir.Value:
        """A 0-d constant of torch dtype ``dtype``."""
        return self.const(self.torch.tensor(v, dtype=dtype))


class _Importer:
    def __init__(self, torch, model, exported, context, buffers=False, input_mutations=False):
        self.torch = torch
        self.buffers = buffers
        self.input_mutations = input_mutations
        self.model = model
        self.ep = exported
        self.context = context
        self.cx = Emitter(torch, context)
        self.env: dict = {}

    # --- signature ---------------------------------------------------------

    def _signature(self):
        from torch.export.graph_signature import InputKind, TensorArgument

        by_id = {}
        param_names = []
        for name, p in self.model.named_parameters():
            by_id[id(p)] = name
            param_names.append(name)
        placeholders = {n.name: n for n in self.ep.graph.nodes if n.op == "placeholder"}
        users, params, bufs = [], {}, {}
        buffer_args = buffer_arguments(self.model, self.ep) if self.buffers else []
        for spec in self.ep.graph_signature.input_specs:
            node = placeholders[spec.arg.name]
            if spec.kind == InputKind.USER_INPUT:
                if isinstance(spec.arg, TensorArgument):
                    users.append(node)
                continue
            if spec.kind == InputKind.PARAMETER:
                canonical = by_id.get(id(self.model.get_parameter(spec.target)), spec.target)
                params.setdefault(canonical, []).append(node)
            elif (spec.kind == InputKind.BUFFER and self.buffers
                  and _buffer_names(self.model, [spec.target])[0] in buffer_args):
                bufs.setdefault(_buffer_names(self.model, [spec.target])[0], []).append(node)
            elif spec.kind in (InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                value = self.ep.state_dict.get(spec.target)
                if value is None:
                    value = self.ep.constants[spec.target]
                self.env[node] = value.detach()
            elif spec.kind == InputKind.CUSTOM_OBJ:
                raise TorchImportError(
                    f"the exported graph takes an object ({spec.arg.name}, such as a "
                    "torch.Generator made in forward) that is not a tensor: not imported; "
                    "create it outside the model or pass its tensors as inputs")
            else:
                raise TorchImportError(f"unsupported input {spec.arg.name} of kind {spec.kind.name}")
        named = dict(self.model.named_parameters())
        args = [(n.name, n.meta["val"].shape, n.meta["val"].dtype, [n]) for n in users]
        args += [(name, named[name].shape, named[name].dtype, params.get(name, []))
                 for name in param_names]
        if self.buffers:
            named_bufs = dict(self.model.named_buffers())
            args += [(name, named_bufs[name].shape, named_bufs[name].dtype, bufs.get(name, []))
                     for name in buffer_args]
        return args

    def _needed(self, outputs):
        needed, todo = set(), [o for o in outputs if hasattr(o, "op")]
        while todo:
            n = todo.pop()
            if n in needed:
                continue
            needed.add(n)
            todo.extend(n.all_input_nodes)
        return needed

    # --- the walk ----------------------------------------------------------

    def run(self, func_name: str):
        from torch.export.graph_signature import OutputKind

        out_node = next(n for n in self.ep.graph.nodes if n.op == "output")
        out_args = list(out_node.args[0])
        specs = self.ep.graph_signature.output_specs
        outputs = [a for a, s in zip(out_args, specs) if s.kind == OutputKind.USER_OUTPUT]
        mutated = []
        if self.input_mutations:
            new = {s.target: a for a, s in zip(out_args, specs)
                   if s.kind == OutputKind.USER_INPUT_MUTATION}
            names = _user_tensor_inputs(self.ep)
            mutated += [new[names[i]] for i in mutated_inputs(self.ep)]
        if self.buffers:
            new = {}
            for a, s in zip(out_args, specs):
                if s.kind == OutputKind.BUFFER_MUTATION:
                    new[_buffer_names(self.model, [s.target])[0]] = a
            mutated += [new[n] for n in mutated_buffers(self.model, self.ep)]
        outputs += mutated
        self._counts = {a for a in mutated if hasattr(a, "op")
                        and not a.meta["val"].dtype.is_floating_point}

        with self.context, ir.Location.unknown():
            signature = self._signature()
            types = [self.cx.tensor_type(shape, dtype) for _, shape, dtype, _ in signature]
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                fn = func.FuncOp(func_name, ir.FunctionType.get(types, []))
            fn.arg_attrs = ir.ArrayAttr.get(
                [ir.DictAttr.get({"gradir.name": ir.StringAttr.get(name)})
                 for name, *_ in signature])
            block = fn.add_entry_block(arg_locs=[ir.Location.name(name)
                                                 for name, *_ in signature])
            for (_, _, _, nodes), arg in zip(signature, block.arguments):
                for n in nodes:
                    self.env[n] = arg
            needed = self._needed(outputs)
            with ir.InsertionPoint(block):
                for node in self.ep.graph.nodes:
                    if node in needed and node.op == "call_function":
                        self._emit(node)
                    elif node in needed and node.op == "get_attr":
                        raise self.cx.error("submodules and control-flow operators "
                                            "(torch.cond, map) are not supported", node)
                results = [self._result(o) for o in outputs]
                func.ReturnOp(results)
            fn.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(types, [r.type for r in results]))
        return module

    def _result(self, o):
        self.cx.node = None
        v = self.env[o] if hasattr(o, "op") else o
        if v is None or isinstance(v, (list, tuple)):
            raise TorchImportError(f"model output {o} is not a tensor")
        if isinstance(v, Unavailable):
            raise TorchImportError(f"a model output is a result of {v.op} that is not "
                                   f"imported: {v.reason}")
        return self.cx.value(v)

    def _location(self, node):
        frame = self.cx.frame(node)
        if frame is None:
            return ir.Location.name(node.name)
        return ir.Location.name(node.name, childLoc=ir.Location.file(frame[0], frame[1], 0))

    def _emit(self, node):
        import torch.fx

        cx = self.cx
        cx.node, cx.op = node, str(node.target)
        args = torch.fx.node.map_arg(node.args, lambda n: self.env[n])
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: self.env[n])
        with self._location(node):
            if node.target is __import__("operator").getitem:
                container, index = args
                self.env[node] = container[index]
                return
            leaves = list(_leaves((args, kwargs)))
            for leaf in leaves:
                if isinstance(leaf, Unavailable):
                    raise cx.error(f"uses a result of {leaf.op} that is not imported: "
                                   f"{leaf.reason}")
            if not any(isinstance(v, ir.Value) for v in leaves) and self._foldable(node):
                self.env[node] = self._fold(node, args, kwargs)
                return
            if node in self._counts:
                self.env[node] = self._count(node, args, kwargs)
                return
            fn = OPS.get(cx.op)
            if fn is None and not self._foldable(node):
                raise cx.error(_RANDOM)
            if fn is None:
                raise cx.error("no rlx mapping for this aten op (gradir.frontends.torch."
                               "supported_ops() lists the mapped ones)")
            try:
                result = fn(cx, *self._bind(node, args, kwargs))
            except ShapeError as err:
                raise cx.error(f"internal error, the mapping built an invalid op: {err}") from err
            self._check(node, result)
            self.env[node] = result

    def _count(self, node, args, kwargs):
        """The new value of an integer buffer: ``count + k`` (BatchNorm's
        ``num_batches_tracked += 1``), computed in f64 (exact below 2**53)
        as rlx arithmetic is floating-point only."""
        t = self.torch
        if (node.target not in (t.ops.aten.add.Tensor, t.ops.aten.add.Scalar) or kwargs
                or len(args) != 2 or not isinstance(args[1], int)
                or not isinstance(args[0], ir.Value)):
            raise self.cx.error("an integer buffer updated by something else than "
                                "`buffer += constant`: integer arithmetic on run-time "
                                "tensors is not imported")
        f64 = ir.F64Type.get()
        total = rlx.add(rlx.astype(args[0], f64), 
                        self.cx.const(t.full(self.cx.shape(args[0]), float(args[1]),
                                             dtype=t.float64)))
        return rlx.astype(total, self.cx.ir_type(self.cx.out_dtype))

    def _foldable(self, node) -> bool:
        tags = getattr(node.target, "tags", ())
        return self.torch.Tag.nondeterministic_seeded not in tags

    def _fold(self, node, args, kwargs):
        try:
            with self.torch.no_grad():
                return node.target(*args, **kwargs)
        except Exception as err:
            raise self.cx.error(f"could not evaluate this op on constants: {err}") from err

    def _bind(self, node, args, kwargs):
        """Positional arguments in schema order, defaults filled in."""
        schema = getattr(node.target, "_schema", None)
        if schema is None:
            return list(args) + list(kwargs.values())
        out = []
        for i, a in enumerate(schema.arguments):
            if i < len(args) and not a.kwarg_only:
                out.append(args[i])
            elif a.name in kwargs:
                out.append(kwargs[a.name])
            elif a.has_default_value():
                out.append(a.default_value)
            else:
                out.append(None)
        return out

    def _check(self, node, result):
        val = node.meta.get("val")
        pairs = []
        if isinstance(result, (list, tuple)) and isinstance(val, (list, tuple)):
            pairs = list(zip(result, val))
        elif not isinstance(result, (list, tuple)):
            pairs = [(result, val)]
        for r, v in pairs:
            if not isinstance(r, ir.Value) or not isinstance(v, self.torch.Tensor):
                continue
            want = self.cx.tensor_type(v.shape, v.dtype)
            if r.type != want:
                raise TorchImportError(
                    f"internal error importing {node.target} ({node.name}): rlx computes "
                    f"{r.type}, torch.export expects {want}")
