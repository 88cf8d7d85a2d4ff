// The rlx dialect: Relax-like tensor ops on builtin tensors (static shapes).
//
// Single source of truth for the op set (DESIGN.md, "The rlx dialect contract").
// Loaded by `mlir-opt --irdl-file=` and by gradir.ir.load_dialects.  Ops print
// in generic form.  IRDL cannot express shapes, optional attributes or
// attribute values: those are checked by `rlx-verify`
// (python/gradir/transforms/rlx_verify.py) using the inference table
// python/gradir/dialects/infer.py:INFER.
//
// Conventions: every axis/axes attribute is array<i64: ...> (negatives count
// from the end); keepdims/ceil_mode are BoolAttr; padding is
// (top, left, bottom, right).  Only always-present attributes are declared
// below (IRDL attributes are required); the others are listed in the comments.
// Each operand/result whose type may differ has its own constraint; a shared
// constraint means "same type".
//
// Variadic ops (concat, tuple: operands; split: results).  IRDL binds a
// constraint to the first type it matches, and a `variadic` operand group
// has one constraint, so every value of the group would need the SAME type
// (MLIR 22 IRDLLoading.cpp: one ConstraintVerifier per op).  concat, tuple
// and split need different types, so they are declared with 16 separate
// optional operands (results), each with its own constraint.  Their generic
// form therefore carries `operandSegmentSizes` (split: `resultSegmentSizes`)
// = array<i32: 1, ..., 1, 0, ..., 0> (one 1 per value present, 16 entries);
// the Python builders add it.  At most 16 values per op.

irdl.dialect @rlx {

  // ===== Unary elementwise (float -> same type) =====

  // rlx.negative: -x
  irdl.operation @negative {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.exp: e^x
  irdl.operation @exp {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.log: natural logarithm
  irdl.operation @log {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.sqrt: square root
  irdl.operation @sqrt {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.rsqrt: 1/sqrt(x)
  irdl.operation @rsqrt {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.sin: sine
  irdl.operation @sin {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.cos: cosine
  irdl.operation @cos {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.tanh: hyperbolic tangent
  irdl.operation @tanh {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.sigmoid: 1/(1+e^-x)
  irdl.operation @sigmoid {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.abs: |x|
  irdl.operation @abs {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.relu: max(x, 0)
  irdl.operation @relu {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.silu: x*sigmoid(x)
  irdl.operation @silu {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.gelu: x*Phi(x) (erf form)
  irdl.operation @gelu {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.erf: error function
  irdl.operation @erf {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.square: x*x
  irdl.operation @square {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // ===== Binary elementwise with numpy broadcasting (same float element type) =====

  // rlx.add: elementwise add
  irdl.operation @add {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.subtract: elementwise subtract
  irdl.operation @subtract {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.multiply: elementwise multiply
  irdl.operation @multiply {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.divide: elementwise divide
  irdl.operation @divide {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.power: elementwise power
  irdl.operation @power {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.maximum: elementwise maximum
  irdl.operation @maximum {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.minimum: elementwise minimum
  irdl.operation @minimum {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // ===== Comparisons: numpy broadcasting, result element type i1 (not differentiable) =====

  // rlx.equal: elementwise equal
  irdl.operation @equal {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.not_equal: elementwise not_equal
  irdl.operation @not_equal {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.less: elementwise less
  irdl.operation @less {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.less_equal: elementwise less_equal
  irdl.operation @less_equal {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.greater: elementwise greater
  irdl.operation @greater {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // rlx.greater_equal: elementwise greater_equal
  irdl.operation @greater_equal {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // ===== Select =====

  // rlx.where: cond ? lhs : rhs elementwise; cond is i1; the three operands broadcast together
  irdl.operation @where {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %o2 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(condition: %o0, lhs: %o1, rhs: %o2)
    irdl.results(result: %r0)
  }

  // ===== Linear algebra =====

  // rlx.matmul: numpy matmul: 1-D operands are promoted (and the added dim removed), leading batch dims broadcast
  irdl.operation @matmul {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %o0, rhs: %o1)
    irdl.results(result: %r0)
  }

  // ===== Shape manipulation =====

  // rlx.permute_dims: transpose; optional `axes` (array<i64>), absent = reversed
  irdl.operation @permute_dims {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.reshape: same elements, shape taken from the result type
  irdl.operation @reshape {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.broadcast_to: numpy broadcast to the result type's shape
  irdl.operation @broadcast_to {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.expand_dims: inserts unit dims at `axis` (positions in the result)
  irdl.operation @expand_dims {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_axis = irdl.base "#builtin.dense_array"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
    irdl.attributes {"axis" = %a_axis}
  }

  // rlx.squeeze: removes unit dims at optional `axis` (absent = every unit dim)
  irdl.operation @squeeze {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.flatten: flattens to a 1-D tensor
  irdl.operation @flatten {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.concat: joins the variadic inputs along optional `axis` (absent = 0)
  irdl.operation @concat {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %o2 = irdl.base "!builtin.tensor"
    %o3 = irdl.base "!builtin.tensor"
    %o4 = irdl.base "!builtin.tensor"
    %o5 = irdl.base "!builtin.tensor"
    %o6 = irdl.base "!builtin.tensor"
    %o7 = irdl.base "!builtin.tensor"
    %o8 = irdl.base "!builtin.tensor"
    %o9 = irdl.base "!builtin.tensor"
    %o10 = irdl.base "!builtin.tensor"
    %o11 = irdl.base "!builtin.tensor"
    %o12 = irdl.base "!builtin.tensor"
    %o13 = irdl.base "!builtin.tensor"
    %o14 = irdl.base "!builtin.tensor"
    %o15 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x0: %o0, x1: optional %o1, x2: optional %o2, x3: optional %o3, x4: optional %o4, x5: optional %o5, x6: optional %o6, x7: optional %o7, x8: optional %o8, x9: optional %o9, x10: optional %o10, x11: optional %o11, x12: optional %o12, x13: optional %o13, x14: optional %o14, x15: optional %o15)
    irdl.results(result: %r0)
  }

  // rlx.split: splits along optional `axis` (absent = 0) into `sections` (i64, equal parts) or at `indices` (array<i64>); exactly one of the two is present
  irdl.operation @split {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %r1 = irdl.base "!builtin.tensor"
    %r2 = irdl.base "!builtin.tensor"
    %r3 = irdl.base "!builtin.tensor"
    %r4 = irdl.base "!builtin.tensor"
    %r5 = irdl.base "!builtin.tensor"
    %r6 = irdl.base "!builtin.tensor"
    %r7 = irdl.base "!builtin.tensor"
    %r8 = irdl.base "!builtin.tensor"
    %r9 = irdl.base "!builtin.tensor"
    %r10 = irdl.base "!builtin.tensor"
    %r11 = irdl.base "!builtin.tensor"
    %r12 = irdl.base "!builtin.tensor"
    %r13 = irdl.base "!builtin.tensor"
    %r14 = irdl.base "!builtin.tensor"
    %r15 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result0: %r0, result1: optional %r1, result2: optional %r2, result3: optional %r3, result4: optional %r4, result5: optional %r5, result6: optional %r6, result7: optional %r7, result8: optional %r8, result9: optional %r9, result10: optional %r10, result11: optional %r11, result12: optional %r12, result13: optional %r13, result14: optional %r14, result15: optional %r15)
  }

  // rlx.strided_slice: slices `axes` from `begin` to `end` (exclusive, clamped, python semantics) with optional `strides` (absent = 1)
  irdl.operation @strided_slice {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_axes = irdl.base "#builtin.dense_array"
    %a_begin = irdl.base "#builtin.dense_array"
    %a_end = irdl.base "#builtin.dense_array"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
    irdl.attributes {"axes" = %a_axes, "begin" = %a_begin, "end" = %a_end}
  }

  // rlx.take: gathers `indices` (i32/i64) along optional `axis` (absent = the flattened input)
  irdl.operation @take {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0, indices: %o1)
    irdl.results(result: %r0)
  }

  // rlx.triu: upper triangle of the last two dims, keeping diagonals >= `k`
  irdl.operation @triu {
    %t = irdl.base "!builtin.tensor"
    %a_k = irdl.base "#builtin.integer"
    irdl.operands(x: %t)
    irdl.results(result: %t)
    irdl.attributes {"k" = %a_k}
  }

  // ===== Reductions: optional `axis` (absent = all axes), optional `keepdims` (BoolAttr, absent = false) =====

  // rlx.sum: sum over axes
  irdl.operation @sum {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.mean: mean over axes
  irdl.operation @mean {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.max: max over axes
  irdl.operation @max {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.min: min over axes
  irdl.operation @min {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.prod: prod over axes
  irdl.operation @prod {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.variance: variance over axes
  irdl.operation @variance {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.cumsum: inclusive cumulative sum along optional `axis` (absent = the flattened input, 1-D result)
  irdl.operation @cumsum {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // ===== Neural network =====

  // rlx.softmax: softmax along optional `axis` (absent = -1)
  irdl.operation @softmax {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.log_softmax: log(softmax) along optional `axis` (absent = -1)
  irdl.operation @log_softmax {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.cross_entropy_with_logits: -sum(labels * predictions) / batch (batch = dim 0 for 2-D inputs, 1 for 1-D); 0-d result
  irdl.operation @cross_entropy_with_logits {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(predictions: %o0, labels: %o1)
    irdl.results(result: %r0)
  }

  // rlx.nll_loss: negative log likelihood: predictions (N, C, d...) or (C,), targets (N, d...) or () of i32/i64, optional weights (C,); `reduction` "mean" | "sum" | "none"; optional `ignore_index` (i64)
  irdl.operation @nll_loss {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %o2 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_reduction = irdl.base "#builtin.string"
    irdl.operands(predictions: %o0, targets: %o1, weights: optional %o2)
    irdl.results(result: %r0)
    irdl.attributes {"reduction" = %a_reduction}
  }

  // rlx.conv2d: 2-D convolution, NCHW data, OIHW weight; padding is (top, left, bottom, right)
  irdl.operation @conv2d {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_strides = irdl.base "#builtin.dense_array"
    %a_padding = irdl.base "#builtin.dense_array"
    %a_dilation = irdl.base "#builtin.dense_array"
    %a_groups = irdl.base "#builtin.integer"
    irdl.operands(data: %o0, weight: %o1)
    irdl.results(result: %r0)
    irdl.attributes {"strides" = %a_strides, "padding" = %a_padding, "dilation" = %a_dilation, "groups" = %a_groups}
  }

  // rlx.max_pool2d: 2-D max pooling, NCHW; optional `dilation` (absent = 1) and `ceil_mode` (BoolAttr)
  irdl.operation @max_pool2d {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    %a_strides = irdl.base "#builtin.dense_array"
    %a_padding = irdl.base "#builtin.dense_array"
    irdl.operands(data: %o0)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size, "strides" = %a_strides, "padding" = %a_padding}
  }

  // rlx.avg_pool2d: 2-D average pooling, NCHW; optional `dilation`, `ceil_mode`, `count_include_pad` (BoolAttr, absent = false)
  irdl.operation @avg_pool2d {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    %a_strides = irdl.base "#builtin.dense_array"
    %a_padding = irdl.base "#builtin.dense_array"
    irdl.operands(data: %o0)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size, "strides" = %a_strides, "padding" = %a_padding}
  }

  // rlx.layer_norm: (x - mean) / sqrt(var + epsilon) * gamma + beta over `axes`; gamma and beta have the normalised dims' shape
  irdl.operation @layer_norm {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %o2 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_axes = irdl.base "#builtin.dense_array"
    %a_epsilon = irdl.base "#builtin.float"
    irdl.operands(data: %o0, gamma: %o1, beta: %o2)
    irdl.results(result: %r0)
    irdl.attributes {"axes" = %a_axes, "epsilon" = %a_epsilon}
  }

  // rlx.rms_norm: x / sqrt(mean(x^2) + epsilon) * weight over optional `axes` (absent = -1); optional `epsilon` (f64, absent = 1e-5)
  irdl.operation @rms_norm {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(data: %o0, weight: %o1)
    irdl.results(result: %r0)
  }

  // ===== Creation =====

  // rlx.zeros: zeros of the result type
  irdl.operation @zeros {
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands()
    irdl.results(result: %r0)
  }

  // rlx.ones: ones of the result type
  irdl.operation @ones {
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands()
    irdl.results(result: %r0)
  }

  // rlx.full: the 0-d `fill` value broadcast to the result type (converted to its element type)
  irdl.operation @full {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(fill: %o0)
    irdl.results(result: %r0)
  }

  // rlx.zeros_like: zeros of the operand's type
  irdl.operation @zeros_like {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // rlx.ones_like: ones of the operand's type
  irdl.operation @ones_like {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // ===== Type conversion =====

  // rlx.astype: elementwise conversion to the result type's element type (same shape)
  irdl.operation @astype {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // ===== Tuples (builtin tuple type) =====

  // rlx.tuple: packs the variadic operands into a tuple<...>
  irdl.operation @tuple {
    %o0 = irdl.any
    %o1 = irdl.any
    %o2 = irdl.any
    %o3 = irdl.any
    %o4 = irdl.any
    %o5 = irdl.any
    %o6 = irdl.any
    %o7 = irdl.any
    %o8 = irdl.any
    %o9 = irdl.any
    %o10 = irdl.any
    %o11 = irdl.any
    %o12 = irdl.any
    %o13 = irdl.any
    %o14 = irdl.any
    %o15 = irdl.any
    %r0 = irdl.base "!builtin.tuple"
    irdl.operands(x0: optional %o0, x1: optional %o1, x2: optional %o2, x3: optional %o3, x4: optional %o4, x5: optional %o5, x6: optional %o6, x7: optional %o7, x8: optional %o8, x9: optional %o9, x10: optional %o10, x11: optional %o11, x12: optional %o12, x13: optional %o13, x14: optional %o14, x15: optional %o15)
    irdl.results(result: %r0)
  }

  // rlx.tuple_get_item: field `index` (i64) of a tuple
  irdl.operation @tuple_get_item {
    %o0 = irdl.base "!builtin.tuple"
    %r0 = irdl.any
    %a_index = irdl.base "#builtin.integer"
    irdl.operands(tuple: %o0)
    irdl.results(result: %r0)
    irdl.attributes {"index" = %a_index}
  }

  // ===== Gradient helpers (Relax semantics; used by gradient rules, part of the contract) =====

  // rlx.conv2d_transpose: transposed 2-D convolution (gradient of conv2d w.r.t. its data): NCHW data, IOHW weight (C_in, C_out/groups, KH, KW); out = (in - 1) * stride - pad_begin - pad_end + dilation * (k - 1) + output_padding + 1; optional `output_padding` (array<i64>, absent = 0)
  irdl.operation @conv2d_transpose {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_strides = irdl.base "#builtin.dense_array"
    %a_padding = irdl.base "#builtin.dense_array"
    %a_dilation = irdl.base "#builtin.dense_array"
    %a_groups = irdl.base "#builtin.integer"
    irdl.operands(data: %o0, weight: %o1)
    irdl.results(result: %r0)
    irdl.attributes {"strides" = %a_strides, "padding" = %a_padding, "dilation" = %a_dilation, "groups" = %a_groups}
  }

  // rlx.max_pool2d_backward: gradient of max_pool2d: routes each `output_grad` element to the arg-max of its window in `data`; same attributes as max_pool2d; result has `data`'s type
  irdl.operation @max_pool2d_backward {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    %a_strides = irdl.base "#builtin.dense_array"
    %a_padding = irdl.base "#builtin.dense_array"
    irdl.operands(output_grad: %o0, data: %o1)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size, "strides" = %a_strides, "padding" = %a_padding}
  }

  // rlx.avg_pool2d_backward: gradient of avg_pool2d: spreads each `output_grad` element evenly over its window; same attributes as avg_pool2d; result has `data`'s type
  irdl.operation @avg_pool2d_backward {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    %a_strides = irdl.base "#builtin.dense_array"
    %a_padding = irdl.base "#builtin.dense_array"
    irdl.operands(output_grad: %o0, data: %o1)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size, "strides" = %a_strides, "padding" = %a_padding}
  }

  // rlx.collapse_sum_to: sums `x` over the axes that numpy broadcasting expanded from the result type's shape (the adjoint of broadcast_to); the result shape must broadcast to x's shape
  irdl.operation @collapse_sum_to {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }
}
