# RUN: %PYTHON %s | FileCheck %s
"""The rlx/grad builders: inferred result types and ShapeError messages."""

from mlir import ir
from mlir.dialects import func

from gradir.dialects import grad, rlx
from gradir.dialects.rlx import ShapeError
from gradir.ir import make_context, print_module
from gradir.dialects.verify import verify_module


def run(f):
    print("\nTEST:", f.__name__)
    with make_context(), ir.Location.unknown():
        f()
    return f


def T(text):
    return ir.Type.parse(text)


def build(name, arg_types, body):
    """Builds ``func.func @name(args)`` whose body is ``body(*args)``; prints
    it and checks that rlx-verify accepts it."""
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp(name, ([T(t) for t in arg_types], []))
        block = fn.add_entry_block()
        with ir.InsertionPoint(block):
            body(*block.arguments)
            func.ReturnOp([])
    assert module.operation.verify()
    errors = verify_module(module.operation)
    assert not errors, errors
    print(print_module(module))


def expect_error(fn):
    try:
        fn()
    except ShapeError as err:
        print("ShapeError:", err)
    else:
        print("no error")


# CHECK-LABEL: TEST: elementwise
# CHECK: "rlx.exp"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
# CHECK: "rlx.add"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
# CHECK: "rlx.multiply"(%{{.*}}, %{{.*}}) : (tensor<4x1x3xf32>, tensor<2x1xf32>) -> tensor<4x2x3xf32>
# CHECK: "rlx.less"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
# CHECK: "rlx.where"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
@run
def elementwise():
    def body(a, b, c, d):
        rlx.exp(a)
        rlx.add(a, b)
        rlx.multiply(c, d)
        cond = rlx.less(a, b)
        rlx.where(cond, b, d)
        for f in (rlx.negative, rlx.log, rlx.sqrt, rlx.rsqrt, rlx.sin, rlx.cos, rlx.tanh,
                  rlx.sigmoid, rlx.abs, rlx.relu, rlx.silu, rlx.gelu, rlx.erf, rlx.square):
            f(a)
        for f in (rlx.subtract, rlx.divide, rlx.power, rlx.maximum, rlx.minimum):
            f(a, b)
        for f in (rlx.equal, rlx.not_equal, rlx.less_equal, rlx.greater, rlx.greater_equal):
            f(a, b)
    build("elementwise", ["tensor<2x3xf32>", "tensor<3xf32>", "tensor<4x1x3xf32>",
                          "tensor<2x1xf32>"], body)


# CHECK-LABEL: TEST: matmul_shapes
# CHECK: (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
# CHECK: (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
# CHECK: (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
# CHECK: (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
# CHECK: (tensor<5x1x2x3xf32>, tensor<7x3x4xf32>) -> tensor<5x7x2x4xf32>
@run
def matmul_shapes():
    def body(a, b, v, x, y):
        rlx.matmul(a, b)
        rlx.matmul(v, b)
        rlx.matmul(a, v)
        rlx.matmul(v, v)
        rlx.matmul(x, y)
    build("matmul_shapes", ["tensor<2x3xf32>", "tensor<3x4xf32>", "tensor<3xf32>",
                            "tensor<5x1x2x3xf32>", "tensor<7x3x4xf32>"], body)


# CHECK-LABEL: TEST: shape_ops
# CHECK: "rlx.permute_dims"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
# CHECK: "rlx.permute_dims"(%{{.*}}) {axes = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
# CHECK: "rlx.reshape"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
# CHECK: "rlx.broadcast_to"(%{{.*}}) : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
# CHECK: "rlx.expand_dims"(%{{.*}}) {axis = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<1x2x3x4x1xf32>
# CHECK: "rlx.squeeze"(%{{.*}}) : (tensor<3x1xf32>) -> tensor<3xf32>
# CHECK: "rlx.squeeze"(%{{.*}}) {axis = array<i64: -1>} : (tensor<3x1xf32>) -> tensor<3xf32>
# CHECK: "rlx.flatten"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<24xf32>
# CHECK: "rlx.concat"(%{{.*}}, %{{.*}}) {axis = array<i64: -1>} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
# CHECK: "rlx.split"(%{{.*}}) {axis = array<i64: 2>, sections = 2 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xf32>)
# CHECK: "rlx.split"(%{{.*}}) {axis = array<i64: 2>, indices = array<i64: 1, 3>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x2xf32>, tensor<2x3x1xf32>)
# CHECK: "rlx.strided_slice"(%{{.*}}) {axes = array<i64: 1, 2>, begin = array<i64: 0, 3>, end = array<i64: 2, 0>, strides = array<i64: 1, -1>} : (tensor<2x3x4xf32>) -> tensor<2x2x3xf32>
# CHECK: "rlx.take"(%{{.*}}, %{{.*}}) {axis = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x5x4xf32>
# CHECK: "rlx.take"(%{{.*}}, %{{.*}}) : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<5xf32>
# CHECK: "rlx.triu"(%{{.*}}) {k = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
@run
def shape_ops():
    def body(x, y, idx):
        rlx.permute_dims(x)
        rlx.permute_dims(x, [1, 0, 2])
        rlx.reshape(x, [-1, 4])
        rlx.broadcast_to(y, [2, 3, 5])
        rlx.expand_dims(x, [0, -1])
        rlx.squeeze(y)
        rlx.squeeze(y, -1)
        rlx.flatten(x)
        rlx.concat([x, x], axis=-1)
        parts = rlx.split(x, 2, axis=2)
        assert len(parts) == 2
        parts = rlx.split(x, [1, 3], axis=2)
        assert len(parts) == 3
        rlx.strided_slice(x, [1, 2], [0, 3], [2, 0], [1, -1])
        rlx.take(x, idx, axis=1)
        rlx.take(x, idx)
        rlx.triu(x, 1)
    build("shape_ops", ["tensor<2x3x4xf32>", "tensor<3x1xf32>", "tensor<5xi64>"], body)


# CHECK-LABEL: TEST: reductions
# CHECK: "rlx.sum"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<f32>
# CHECK: "rlx.sum"(%{{.*}}) {axis = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
# CHECK: "rlx.mean"(%{{.*}}) {axis = array<i64: -1, 0>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
# CHECK: "rlx.max"(%{{.*}}) {axis = array<i64: -2>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
# CHECK: "rlx.min"
# CHECK: "rlx.prod"
# CHECK: "rlx.variance"(%{{.*}}) {axis = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
# CHECK: "rlx.cumsum"(%{{.*}}) {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
# CHECK: "rlx.cumsum"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<24xf32>
@run
def reductions():
    def body(x):
        rlx.sum(x)
        rlx.sum(x, axis=[1], keepdims=True)
        rlx.mean(x, axis=[-1, 0])
        rlx.max(x, axis=-2)
        rlx.min(x, axis=0)
        rlx.prod(x, axis=0)
        rlx.variance(x, axis=2, keepdims=True)
        rlx.cumsum(x, axis=1)
        rlx.cumsum(x)
    build("reductions", ["tensor<2x3x4xf32>"], body)


# CHECK-LABEL: TEST: nn_ops
# CHECK: "rlx.softmax"(%{{.*}}) {axis = array<i64: -1>} : (tensor<4x10xf32>) -> tensor<4x10xf32>
# CHECK: "rlx.log_softmax"(%{{.*}}) {axis = array<i64: 0>}
# CHECK: "rlx.cross_entropy_with_logits"(%{{.*}}, %{{.*}}) : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<f32>
# CHECK: "rlx.nll_loss"(%{{.*}}, %{{.*}}) {reduction = "mean"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
# CHECK: "rlx.nll_loss"(%{{.*}}, %{{.*}}, %{{.*}}) {reduction = "none"} : (tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> tensor<4xf32>
# CHECK: "rlx.conv2d"(%{{.*}}, %{{.*}}) {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x5x5xf32>
# CHECK: "rlx.conv2d"(%{{.*}}, %{{.*}}) {dilation = array<i64: 2, 2>, groups = 2 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x5xf32>
# CHECK: "rlx.max_pool2d"(%{{.*}}) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x4x4xf32>
# CHECK: "rlx.avg_pool2d"(%{{.*}}) {ceil_mode = true, padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
# CHECK: "rlx.avg_pool2d"(%{{.*}}) {count_include_pad = true, padding = array<i64: 1, 1, 1, 1>, pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
# CHECK: "rlx.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: -1>, epsilon = 1.000000e-05 : f64} : (tensor<4x10xf32>, tensor<10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
# CHECK: "rlx.rms_norm"(%{{.*}}, %{{.*}}) : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
@run
def nn_ops():
    def body(x, lab, tgt, w, img, k, kg):
        rlx.softmax(x)
        rlx.log_softmax(x, axis=0)
        rlx.cross_entropy_with_logits(x, lab)
        rlx.nll_loss(x, tgt)
        rlx.nll_loss(x, tgt, w, reduction="none")
        rlx.conv2d(img, k, strides=[2, 2], padding=[1, 1, 1, 1])
        rlx.conv2d(img, kg, dilation=[2, 2], groups=2)
        rlx.max_pool2d(img, pool_size=[2, 2], strides=[2, 2])
        rlx.avg_pool2d(img, pool_size=[2, 2], strides=[2, 2], ceil_mode=True)
        rlx.avg_pool2d(img, pool_size=3, strides=2, padding=1, count_include_pad=True)
        rlx.layer_norm(x, w, w, axes=[-1], epsilon=1e-5)
        rlx.rms_norm(x, w)
    build("nn_ops", ["tensor<4x10xf32>", "tensor<4x10xf32>", "tensor<4xi64>", "tensor<10xf32>",
                     "tensor<2x4x9x9xf32>", "tensor<8x4x3x3xf32>", "tensor<6x2x3x3xf32>"], body)


# CHECK-LABEL: TEST: gradient_helpers
# CHECK: "rlx.conv2d_transpose"(%{{.*}}, %{{.*}}) {dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x10x10xf32>
# CHECK: "rlx.max_pool2d_backward"(%{{.*}}, %{{.*}}) {padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>
# CHECK: "rlx.avg_pool2d_backward"(%{{.*}}, %{{.*}}) {{.*}} : (tensor<2x4x4x4xf32>, tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>
# CHECK: "rlx.collapse_sum_to"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<3x1xf32>
@run
def gradient_helpers():
    def body(dy, k, g, img, x):
        rlx.conv2d_transpose(dy, k, strides=[2, 2], padding=[1, 1, 1, 1], output_padding=[1, 1])
        rlx.max_pool2d_backward(g, img, pool_size=[2, 2], strides=[2, 2])
        rlx.avg_pool2d_backward(g, img, pool_size=[2, 2], strides=[2, 2])
        rlx.collapse_sum_to(x, [3, 1])
    build("gradient_helpers", ["tensor<2x8x5x5xf32>", "tensor<8x4x3x3xf32>",
                               "tensor<2x4x4x4xf32>", "tensor<2x4x9x9xf32>",
                               "tensor<2x3x4xf32>"], body)


# CHECK-LABEL: TEST: create_and_tuples
# CHECK: "rlx.zeros"() : () -> tensor<2x3xf32>
# CHECK: "rlx.ones"() : () -> tensor<4xbf16>
# CHECK: "rlx.full"(%{{.*}}) : (tensor<f32>) -> tensor<2x3xf32>
# CHECK: %[[C:.*]] = arith.constant dense<1.500000e+00> : tensor<f64>
# CHECK: "rlx.full"(%[[C]]) : (tensor<f64>) -> tensor<2xf64>
# CHECK: "rlx.zeros_like"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
# CHECK: "rlx.ones_like"
# CHECK: "rlx.astype"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf16>
# CHECK: "rlx.astype"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xi32>
# CHECK: %[[T:.*]] = "rlx.tuple"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<f32>) -> tuple<tensor<2x3xf32>, tensor<f32>>
# CHECK: "rlx.tuple_get_item"(%[[T]]) {index = 1 : i64} : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<f32>
# CHECK: "grad.start_checkpoint"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
# CHECK: "grad.end_checkpoint"
# CHECK: "grad.no_grad"(%[[T]]) : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tuple<tensor<2x3xf32>, tensor<f32>>
@run
def create_and_tuples():
    def body(x, s):
        rlx.zeros([2, 3], ir.F32Type)
        rlx.ones([4], "bf16")
        rlx.full([2, 3], s)
        rlx.full([2], 1.5, ir.F64Type.get())
        rlx.zeros_like(x)
        rlx.ones_like(x)
        rlx.astype(x, ir.F16Type)
        rlx.astype(x, "i32")
        t = rlx.tuple([x, s])
        rlx.tuple_get_item(t, 1)
        grad.end_checkpoint(grad.start_checkpoint(x))
        grad.no_grad(t)
    build("create_and_tuples", ["tensor<2x3xf32>", "tensor<f32>"], body)


# CHECK-LABEL: TEST: shape_errors
# CHECK: ShapeError: 'rlx.add' op shapes (2, 3) and (4,) are not broadcastable
# CHECK: ShapeError: 'rlx.add' op lhs and rhs must have the same element type, got f32 and f64
# CHECK: ShapeError: 'rlx.exp' op operand element type must be one of f16, bf16, f32, f64, got i32
# CHECK: ShapeError: 'rlx.matmul' op contraction dimensions differ: lhs (2, 3) has 3, rhs (4,) has 4
# CHECK: ShapeError: 'rlx.matmul' op shapes (5,) and (7,) are not broadcastable
# CHECK: ShapeError: 'rlx.sum' op axis 2 is out of range for rank 2
# CHECK: ShapeError: 'rlx.sum' op axis [0, -2] has duplicates
# CHECK: ShapeError: 'rlx.reshape' op cannot reshape (2, 3) (6 elements) to (4,) (4 elements)
# CHECK: ShapeError: 'rlx.split' op 'sections' must be positive, got 0
# CHECK: ShapeError: 'rlx.concat' op operand #1 has shape (3, 3), incompatible with (2, 3) outside axis 1
# CHECK: ShapeError: 'rlx.conv2d' op weight has 3 input channels, expected 4 (data channels 4 / groups 1)
# CHECK: ShapeError: 'rlx.max_pool2d' op pool window [5, 5] is larger than the padded input
# CHECK: ShapeError: 'rlx.tuple_get_item' op index 2 is out of range for a tuple of 2 element(s)
# CHECK: ShapeError: 'rlx.where' op condition element type must be one of i1, got f32
# CHECK: ShapeError: 'rlx.take' op indices element type must be one of i32, i64, got f32
# CHECK: ShapeError: 'rlx.broadcast_to' op cannot broadcast (2, 3) to (4, 3)
# CHECK: ShapeError: 'rlx.squeeze' op cannot squeeze axis 0 of size 2
@run
def shape_errors():
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        types = [T(t) for t in ("tensor<2x3xf32>", "tensor<4xf32>", "tensor<3xf64>",
                                "tensor<3xi32>", "tensor<5x2x3xf32>", "tensor<7x3x2xf32>",
                                "tensor<3x3xf32>", "tensor<2x4x4x4xf32>", "tensor<8x3x1x1xf32>")]
        fn = func.FuncOp("errors", (types, []))
        block = fn.add_entry_block()
    a, v4, d3, i3, b5, b7, c33, img, k = block.arguments
    with ir.InsertionPoint(block):
        expect_error(lambda: rlx.add(a, v4))
        expect_error(lambda: rlx.add(a, d3))
        expect_error(lambda: rlx.exp(i3))
        expect_error(lambda: rlx.matmul(a, v4))
        expect_error(lambda: rlx.matmul(b5, b7))
        expect_error(lambda: rlx.sum(a, axis=[2]))
        expect_error(lambda: rlx.sum(a, axis=[0, -2]))
        expect_error(lambda: rlx.reshape(a, [4]))
        expect_error(lambda: rlx.split(a, 0, axis=1))
        expect_error(lambda: rlx.concat([a, c33], axis=1))
        expect_error(lambda: rlx.conv2d(img, k))
        expect_error(lambda: rlx.max_pool2d(img, pool_size=[5, 5]))
        t = rlx.tuple([a, a])
        expect_error(lambda: rlx.tuple_get_item(t, 2))
        expect_error(lambda: rlx.where(a, a, a))
        expect_error(lambda: rlx.take(a, a))
        expect_error(lambda: rlx.broadcast_to(a, [4, 3]))
        expect_error(lambda: rlx.squeeze(a, 0))
