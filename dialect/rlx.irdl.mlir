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
// constraint to the first type it matches, and a `variadic` group has one
// constraint, so all values of one group must have the SAME type (MLIR 22
// IRDLLoading.cpp: one ConstraintVerifier per op).  concat, tuple and split
// take values of different types, so they are declared with 256 `variadic`
// groups, each with its own constraint; a group holds one run of
// consecutive values of equal type.  The generic form therefore carries
// `operandSegmentSizes` (split: `resultSegmentSizes`) = array<i32: run
// lengths..., 0, ...> (256 entries).  That is the form upstream
// `mlir-opt --irdl-file=` reads.  gradir's readers (gradir-opt, gradir-run,
// gradir.parse) also take the contract's natural form without the attribute,
// and gradir prints the natural form unless asked for this one (README,
// "Variadic ops").

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
    %o16 = irdl.base "!builtin.tensor"
    %o17 = irdl.base "!builtin.tensor"
    %o18 = irdl.base "!builtin.tensor"
    %o19 = irdl.base "!builtin.tensor"
    %o20 = irdl.base "!builtin.tensor"
    %o21 = irdl.base "!builtin.tensor"
    %o22 = irdl.base "!builtin.tensor"
    %o23 = irdl.base "!builtin.tensor"
    %o24 = irdl.base "!builtin.tensor"
    %o25 = irdl.base "!builtin.tensor"
    %o26 = irdl.base "!builtin.tensor"
    %o27 = irdl.base "!builtin.tensor"
    %o28 = irdl.base "!builtin.tensor"
    %o29 = irdl.base "!builtin.tensor"
    %o30 = irdl.base "!builtin.tensor"
    %o31 = irdl.base "!builtin.tensor"
    %o32 = irdl.base "!builtin.tensor"
    %o33 = irdl.base "!builtin.tensor"
    %o34 = irdl.base "!builtin.tensor"
    %o35 = irdl.base "!builtin.tensor"
    %o36 = irdl.base "!builtin.tensor"
    %o37 = irdl.base "!builtin.tensor"
    %o38 = irdl.base "!builtin.tensor"
    %o39 = irdl.base "!builtin.tensor"
    %o40 = irdl.base "!builtin.tensor"
    %o41 = irdl.base "!builtin.tensor"
    %o42 = irdl.base "!builtin.tensor"
    %o43 = irdl.base "!builtin.tensor"
    %o44 = irdl.base "!builtin.tensor"
    %o45 = irdl.base "!builtin.tensor"
    %o46 = irdl.base "!builtin.tensor"
    %o47 = irdl.base "!builtin.tensor"
    %o48 = irdl.base "!builtin.tensor"
    %o49 = irdl.base "!builtin.tensor"
    %o50 = irdl.base "!builtin.tensor"
    %o51 = irdl.base "!builtin.tensor"
    %o52 = irdl.base "!builtin.tensor"
    %o53 = irdl.base "!builtin.tensor"
    %o54 = irdl.base "!builtin.tensor"
    %o55 = irdl.base "!builtin.tensor"
    %o56 = irdl.base "!builtin.tensor"
    %o57 = irdl.base "!builtin.tensor"
    %o58 = irdl.base "!builtin.tensor"
    %o59 = irdl.base "!builtin.tensor"
    %o60 = irdl.base "!builtin.tensor"
    %o61 = irdl.base "!builtin.tensor"
    %o62 = irdl.base "!builtin.tensor"
    %o63 = irdl.base "!builtin.tensor"
    %o64 = irdl.base "!builtin.tensor"
    %o65 = irdl.base "!builtin.tensor"
    %o66 = irdl.base "!builtin.tensor"
    %o67 = irdl.base "!builtin.tensor"
    %o68 = irdl.base "!builtin.tensor"
    %o69 = irdl.base "!builtin.tensor"
    %o70 = irdl.base "!builtin.tensor"
    %o71 = irdl.base "!builtin.tensor"
    %o72 = irdl.base "!builtin.tensor"
    %o73 = irdl.base "!builtin.tensor"
    %o74 = irdl.base "!builtin.tensor"
    %o75 = irdl.base "!builtin.tensor"
    %o76 = irdl.base "!builtin.tensor"
    %o77 = irdl.base "!builtin.tensor"
    %o78 = irdl.base "!builtin.tensor"
    %o79 = irdl.base "!builtin.tensor"
    %o80 = irdl.base "!builtin.tensor"
    %o81 = irdl.base "!builtin.tensor"
    %o82 = irdl.base "!builtin.tensor"
    %o83 = irdl.base "!builtin.tensor"
    %o84 = irdl.base "!builtin.tensor"
    %o85 = irdl.base "!builtin.tensor"
    %o86 = irdl.base "!builtin.tensor"
    %o87 = irdl.base "!builtin.tensor"
    %o88 = irdl.base "!builtin.tensor"
    %o89 = irdl.base "!builtin.tensor"
    %o90 = irdl.base "!builtin.tensor"
    %o91 = irdl.base "!builtin.tensor"
    %o92 = irdl.base "!builtin.tensor"
    %o93 = irdl.base "!builtin.tensor"
    %o94 = irdl.base "!builtin.tensor"
    %o95 = irdl.base "!builtin.tensor"
    %o96 = irdl.base "!builtin.tensor"
    %o97 = irdl.base "!builtin.tensor"
    %o98 = irdl.base "!builtin.tensor"
    %o99 = irdl.base "!builtin.tensor"
    %o100 = irdl.base "!builtin.tensor"
    %o101 = irdl.base "!builtin.tensor"
    %o102 = irdl.base "!builtin.tensor"
    %o103 = irdl.base "!builtin.tensor"
    %o104 = irdl.base "!builtin.tensor"
    %o105 = irdl.base "!builtin.tensor"
    %o106 = irdl.base "!builtin.tensor"
    %o107 = irdl.base "!builtin.tensor"
    %o108 = irdl.base "!builtin.tensor"
    %o109 = irdl.base "!builtin.tensor"
    %o110 = irdl.base "!builtin.tensor"
    %o111 = irdl.base "!builtin.tensor"
    %o112 = irdl.base "!builtin.tensor"
    %o113 = irdl.base "!builtin.tensor"
    %o114 = irdl.base "!builtin.tensor"
    %o115 = irdl.base "!builtin.tensor"
    %o116 = irdl.base "!builtin.tensor"
    %o117 = irdl.base "!builtin.tensor"
    %o118 = irdl.base "!builtin.tensor"
    %o119 = irdl.base "!builtin.tensor"
    %o120 = irdl.base "!builtin.tensor"
    %o121 = irdl.base "!builtin.tensor"
    %o122 = irdl.base "!builtin.tensor"
    %o123 = irdl.base "!builtin.tensor"
    %o124 = irdl.base "!builtin.tensor"
    %o125 = irdl.base "!builtin.tensor"
    %o126 = irdl.base "!builtin.tensor"
    %o127 = irdl.base "!builtin.tensor"
    %o128 = irdl.base "!builtin.tensor"
    %o129 = irdl.base "!builtin.tensor"
    %o130 = irdl.base "!builtin.tensor"
    %o131 = irdl.base "!builtin.tensor"
    %o132 = irdl.base "!builtin.tensor"
    %o133 = irdl.base "!builtin.tensor"
    %o134 = irdl.base "!builtin.tensor"
    %o135 = irdl.base "!builtin.tensor"
    %o136 = irdl.base "!builtin.tensor"
    %o137 = irdl.base "!builtin.tensor"
    %o138 = irdl.base "!builtin.tensor"
    %o139 = irdl.base "!builtin.tensor"
    %o140 = irdl.base "!builtin.tensor"
    %o141 = irdl.base "!builtin.tensor"
    %o142 = irdl.base "!builtin.tensor"
    %o143 = irdl.base "!builtin.tensor"
    %o144 = irdl.base "!builtin.tensor"
    %o145 = irdl.base "!builtin.tensor"
    %o146 = irdl.base "!builtin.tensor"
    %o147 = irdl.base "!builtin.tensor"
    %o148 = irdl.base "!builtin.tensor"
    %o149 = irdl.base "!builtin.tensor"
    %o150 = irdl.base "!builtin.tensor"
    %o151 = irdl.base "!builtin.tensor"
    %o152 = irdl.base "!builtin.tensor"
    %o153 = irdl.base "!builtin.tensor"
    %o154 = irdl.base "!builtin.tensor"
    %o155 = irdl.base "!builtin.tensor"
    %o156 = irdl.base "!builtin.tensor"
    %o157 = irdl.base "!builtin.tensor"
    %o158 = irdl.base "!builtin.tensor"
    %o159 = irdl.base "!builtin.tensor"
    %o160 = irdl.base "!builtin.tensor"
    %o161 = irdl.base "!builtin.tensor"
    %o162 = irdl.base "!builtin.tensor"
    %o163 = irdl.base "!builtin.tensor"
    %o164 = irdl.base "!builtin.tensor"
    %o165 = irdl.base "!builtin.tensor"
    %o166 = irdl.base "!builtin.tensor"
    %o167 = irdl.base "!builtin.tensor"
    %o168 = irdl.base "!builtin.tensor"
    %o169 = irdl.base "!builtin.tensor"
    %o170 = irdl.base "!builtin.tensor"
    %o171 = irdl.base "!builtin.tensor"
    %o172 = irdl.base "!builtin.tensor"
    %o173 = irdl.base "!builtin.tensor"
    %o174 = irdl.base "!builtin.tensor"
    %o175 = irdl.base "!builtin.tensor"
    %o176 = irdl.base "!builtin.tensor"
    %o177 = irdl.base "!builtin.tensor"
    %o178 = irdl.base "!builtin.tensor"
    %o179 = irdl.base "!builtin.tensor"
    %o180 = irdl.base "!builtin.tensor"
    %o181 = irdl.base "!builtin.tensor"
    %o182 = irdl.base "!builtin.tensor"
    %o183 = irdl.base "!builtin.tensor"
    %o184 = irdl.base "!builtin.tensor"
    %o185 = irdl.base "!builtin.tensor"
    %o186 = irdl.base "!builtin.tensor"
    %o187 = irdl.base "!builtin.tensor"
    %o188 = irdl.base "!builtin.tensor"
    %o189 = irdl.base "!builtin.tensor"
    %o190 = irdl.base "!builtin.tensor"
    %o191 = irdl.base "!builtin.tensor"
    %o192 = irdl.base "!builtin.tensor"
    %o193 = irdl.base "!builtin.tensor"
    %o194 = irdl.base "!builtin.tensor"
    %o195 = irdl.base "!builtin.tensor"
    %o196 = irdl.base "!builtin.tensor"
    %o197 = irdl.base "!builtin.tensor"
    %o198 = irdl.base "!builtin.tensor"
    %o199 = irdl.base "!builtin.tensor"
    %o200 = irdl.base "!builtin.tensor"
    %o201 = irdl.base "!builtin.tensor"
    %o202 = irdl.base "!builtin.tensor"
    %o203 = irdl.base "!builtin.tensor"
    %o204 = irdl.base "!builtin.tensor"
    %o205 = irdl.base "!builtin.tensor"
    %o206 = irdl.base "!builtin.tensor"
    %o207 = irdl.base "!builtin.tensor"
    %o208 = irdl.base "!builtin.tensor"
    %o209 = irdl.base "!builtin.tensor"
    %o210 = irdl.base "!builtin.tensor"
    %o211 = irdl.base "!builtin.tensor"
    %o212 = irdl.base "!builtin.tensor"
    %o213 = irdl.base "!builtin.tensor"
    %o214 = irdl.base "!builtin.tensor"
    %o215 = irdl.base "!builtin.tensor"
    %o216 = irdl.base "!builtin.tensor"
    %o217 = irdl.base "!builtin.tensor"
    %o218 = irdl.base "!builtin.tensor"
    %o219 = irdl.base "!builtin.tensor"
    %o220 = irdl.base "!builtin.tensor"
    %o221 = irdl.base "!builtin.tensor"
    %o222 = irdl.base "!builtin.tensor"
    %o223 = irdl.base "!builtin.tensor"
    %o224 = irdl.base "!builtin.tensor"
    %o225 = irdl.base "!builtin.tensor"
    %o226 = irdl.base "!builtin.tensor"
    %o227 = irdl.base "!builtin.tensor"
    %o228 = irdl.base "!builtin.tensor"
    %o229 = irdl.base "!builtin.tensor"
    %o230 = irdl.base "!builtin.tensor"
    %o231 = irdl.base "!builtin.tensor"
    %o232 = irdl.base "!builtin.tensor"
    %o233 = irdl.base "!builtin.tensor"
    %o234 = irdl.base "!builtin.tensor"
    %o235 = irdl.base "!builtin.tensor"
    %o236 = irdl.base "!builtin.tensor"
    %o237 = irdl.base "!builtin.tensor"
    %o238 = irdl.base "!builtin.tensor"
    %o239 = irdl.base "!builtin.tensor"
    %o240 = irdl.base "!builtin.tensor"
    %o241 = irdl.base "!builtin.tensor"
    %o242 = irdl.base "!builtin.tensor"
    %o243 = irdl.base "!builtin.tensor"
    %o244 = irdl.base "!builtin.tensor"
    %o245 = irdl.base "!builtin.tensor"
    %o246 = irdl.base "!builtin.tensor"
    %o247 = irdl.base "!builtin.tensor"
    %o248 = irdl.base "!builtin.tensor"
    %o249 = irdl.base "!builtin.tensor"
    %o250 = irdl.base "!builtin.tensor"
    %o251 = irdl.base "!builtin.tensor"
    %o252 = irdl.base "!builtin.tensor"
    %o253 = irdl.base "!builtin.tensor"
    %o254 = irdl.base "!builtin.tensor"
    %o255 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x0: variadic %o0, x1: variadic %o1, x2: variadic %o2, x3: variadic %o3, x4: variadic %o4, x5: variadic %o5, x6: variadic %o6, x7: variadic %o7, x8: variadic %o8, x9: variadic %o9, x10: variadic %o10, x11: variadic %o11, x12: variadic %o12, x13: variadic %o13, x14: variadic %o14, x15: variadic %o15, x16: variadic %o16, x17: variadic %o17, x18: variadic %o18, x19: variadic %o19, x20: variadic %o20, x21: variadic %o21, x22: variadic %o22, x23: variadic %o23, x24: variadic %o24, x25: variadic %o25, x26: variadic %o26, x27: variadic %o27, x28: variadic %o28, x29: variadic %o29, x30: variadic %o30, x31: variadic %o31, x32: variadic %o32, x33: variadic %o33, x34: variadic %o34, x35: variadic %o35, x36: variadic %o36, x37: variadic %o37, x38: variadic %o38, x39: variadic %o39, x40: variadic %o40, x41: variadic %o41, x42: variadic %o42, x43: variadic %o43, x44: variadic %o44, x45: variadic %o45, x46: variadic %o46, x47: variadic %o47, x48: variadic %o48, x49: variadic %o49, x50: variadic %o50, x51: variadic %o51, x52: variadic %o52, x53: variadic %o53, x54: variadic %o54, x55: variadic %o55, x56: variadic %o56, x57: variadic %o57, x58: variadic %o58, x59: variadic %o59, x60: variadic %o60, x61: variadic %o61, x62: variadic %o62, x63: variadic %o63, x64: variadic %o64, x65: variadic %o65, x66: variadic %o66, x67: variadic %o67, x68: variadic %o68, x69: variadic %o69, x70: variadic %o70, x71: variadic %o71, x72: variadic %o72, x73: variadic %o73, x74: variadic %o74, x75: variadic %o75, x76: variadic %o76, x77: variadic %o77, x78: variadic %o78, x79: variadic %o79, x80: variadic %o80, x81: variadic %o81, x82: variadic %o82, x83: variadic %o83, x84: variadic %o84, x85: variadic %o85, x86: variadic %o86, x87: variadic %o87, x88: variadic %o88, x89: variadic %o89, x90: variadic %o90, x91: variadic %o91, x92: variadic %o92, x93: variadic %o93, x94: variadic %o94, x95: variadic %o95, x96: variadic %o96, x97: variadic %o97, x98: variadic %o98, x99: variadic %o99, x100: variadic %o100, x101: variadic %o101, x102: variadic %o102, x103: variadic %o103, x104: variadic %o104, x105: variadic %o105, x106: variadic %o106, x107: variadic %o107, x108: variadic %o108, x109: variadic %o109, x110: variadic %o110, x111: variadic %o111, x112: variadic %o112, x113: variadic %o113, x114: variadic %o114, x115: variadic %o115, x116: variadic %o116, x117: variadic %o117, x118: variadic %o118, x119: variadic %o119, x120: variadic %o120, x121: variadic %o121, x122: variadic %o122, x123: variadic %o123, x124: variadic %o124, x125: variadic %o125, x126: variadic %o126, x127: variadic %o127, x128: variadic %o128, x129: variadic %o129, x130: variadic %o130, x131: variadic %o131, x132: variadic %o132, x133: variadic %o133, x134: variadic %o134, x135: variadic %o135, x136: variadic %o136, x137: variadic %o137, x138: variadic %o138, x139: variadic %o139, x140: variadic %o140, x141: variadic %o141, x142: variadic %o142, x143: variadic %o143, x144: variadic %o144, x145: variadic %o145, x146: variadic %o146, x147: variadic %o147, x148: variadic %o148, x149: variadic %o149, x150: variadic %o150, x151: variadic %o151, x152: variadic %o152, x153: variadic %o153, x154: variadic %o154, x155: variadic %o155, x156: variadic %o156, x157: variadic %o157, x158: variadic %o158, x159: variadic %o159, x160: variadic %o160, x161: variadic %o161, x162: variadic %o162, x163: variadic %o163, x164: variadic %o164, x165: variadic %o165, x166: variadic %o166, x167: variadic %o167, x168: variadic %o168, x169: variadic %o169, x170: variadic %o170, x171: variadic %o171, x172: variadic %o172, x173: variadic %o173, x174: variadic %o174, x175: variadic %o175, x176: variadic %o176, x177: variadic %o177, x178: variadic %o178, x179: variadic %o179, x180: variadic %o180, x181: variadic %o181, x182: variadic %o182, x183: variadic %o183, x184: variadic %o184, x185: variadic %o185, x186: variadic %o186, x187: variadic %o187, x188: variadic %o188, x189: variadic %o189, x190: variadic %o190, x191: variadic %o191, x192: variadic %o192, x193: variadic %o193, x194: variadic %o194, x195: variadic %o195, x196: variadic %o196, x197: variadic %o197, x198: variadic %o198, x199: variadic %o199, x200: variadic %o200, x201: variadic %o201, x202: variadic %o202, x203: variadic %o203, x204: variadic %o204, x205: variadic %o205, x206: variadic %o206, x207: variadic %o207, x208: variadic %o208, x209: variadic %o209, x210: variadic %o210, x211: variadic %o211, x212: variadic %o212, x213: variadic %o213, x214: variadic %o214, x215: variadic %o215, x216: variadic %o216, x217: variadic %o217, x218: variadic %o218, x219: variadic %o219, x220: variadic %o220, x221: variadic %o221, x222: variadic %o222, x223: variadic %o223, x224: variadic %o224, x225: variadic %o225, x226: variadic %o226, x227: variadic %o227, x228: variadic %o228, x229: variadic %o229, x230: variadic %o230, x231: variadic %o231, x232: variadic %o232, x233: variadic %o233, x234: variadic %o234, x235: variadic %o235, x236: variadic %o236, x237: variadic %o237, x238: variadic %o238, x239: variadic %o239, x240: variadic %o240, x241: variadic %o241, x242: variadic %o242, x243: variadic %o243, x244: variadic %o244, x245: variadic %o245, x246: variadic %o246, x247: variadic %o247, x248: variadic %o248, x249: variadic %o249, x250: variadic %o250, x251: variadic %o251, x252: variadic %o252, x253: variadic %o253, x254: variadic %o254, x255: variadic %o255)
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
    %r16 = irdl.base "!builtin.tensor"
    %r17 = irdl.base "!builtin.tensor"
    %r18 = irdl.base "!builtin.tensor"
    %r19 = irdl.base "!builtin.tensor"
    %r20 = irdl.base "!builtin.tensor"
    %r21 = irdl.base "!builtin.tensor"
    %r22 = irdl.base "!builtin.tensor"
    %r23 = irdl.base "!builtin.tensor"
    %r24 = irdl.base "!builtin.tensor"
    %r25 = irdl.base "!builtin.tensor"
    %r26 = irdl.base "!builtin.tensor"
    %r27 = irdl.base "!builtin.tensor"
    %r28 = irdl.base "!builtin.tensor"
    %r29 = irdl.base "!builtin.tensor"
    %r30 = irdl.base "!builtin.tensor"
    %r31 = irdl.base "!builtin.tensor"
    %r32 = irdl.base "!builtin.tensor"
    %r33 = irdl.base "!builtin.tensor"
    %r34 = irdl.base "!builtin.tensor"
    %r35 = irdl.base "!builtin.tensor"
    %r36 = irdl.base "!builtin.tensor"
    %r37 = irdl.base "!builtin.tensor"
    %r38 = irdl.base "!builtin.tensor"
    %r39 = irdl.base "!builtin.tensor"
    %r40 = irdl.base "!builtin.tensor"
    %r41 = irdl.base "!builtin.tensor"
    %r42 = irdl.base "!builtin.tensor"
    %r43 = irdl.base "!builtin.tensor"
    %r44 = irdl.base "!builtin.tensor"
    %r45 = irdl.base "!builtin.tensor"
    %r46 = irdl.base "!builtin.tensor"
    %r47 = irdl.base "!builtin.tensor"
    %r48 = irdl.base "!builtin.tensor"
    %r49 = irdl.base "!builtin.tensor"
    %r50 = irdl.base "!builtin.tensor"
    %r51 = irdl.base "!builtin.tensor"
    %r52 = irdl.base "!builtin.tensor"
    %r53 = irdl.base "!builtin.tensor"
    %r54 = irdl.base "!builtin.tensor"
    %r55 = irdl.base "!builtin.tensor"
    %r56 = irdl.base "!builtin.tensor"
    %r57 = irdl.base "!builtin.tensor"
    %r58 = irdl.base "!builtin.tensor"
    %r59 = irdl.base "!builtin.tensor"
    %r60 = irdl.base "!builtin.tensor"
    %r61 = irdl.base "!builtin.tensor"
    %r62 = irdl.base "!builtin.tensor"
    %r63 = irdl.base "!builtin.tensor"
    %r64 = irdl.base "!builtin.tensor"
    %r65 = irdl.base "!builtin.tensor"
    %r66 = irdl.base "!builtin.tensor"
    %r67 = irdl.base "!builtin.tensor"
    %r68 = irdl.base "!builtin.tensor"
    %r69 = irdl.base "!builtin.tensor"
    %r70 = irdl.base "!builtin.tensor"
    %r71 = irdl.base "!builtin.tensor"
    %r72 = irdl.base "!builtin.tensor"
    %r73 = irdl.base "!builtin.tensor"
    %r74 = irdl.base "!builtin.tensor"
    %r75 = irdl.base "!builtin.tensor"
    %r76 = irdl.base "!builtin.tensor"
    %r77 = irdl.base "!builtin.tensor"
    %r78 = irdl.base "!builtin.tensor"
    %r79 = irdl.base "!builtin.tensor"
    %r80 = irdl.base "!builtin.tensor"
    %r81 = irdl.base "!builtin.tensor"
    %r82 = irdl.base "!builtin.tensor"
    %r83 = irdl.base "!builtin.tensor"
    %r84 = irdl.base "!builtin.tensor"
    %r85 = irdl.base "!builtin.tensor"
    %r86 = irdl.base "!builtin.tensor"
    %r87 = irdl.base "!builtin.tensor"
    %r88 = irdl.base "!builtin.tensor"
    %r89 = irdl.base "!builtin.tensor"
    %r90 = irdl.base "!builtin.tensor"
    %r91 = irdl.base "!builtin.tensor"
    %r92 = irdl.base "!builtin.tensor"
    %r93 = irdl.base "!builtin.tensor"
    %r94 = irdl.base "!builtin.tensor"
    %r95 = irdl.base "!builtin.tensor"
    %r96 = irdl.base "!builtin.tensor"
    %r97 = irdl.base "!builtin.tensor"
    %r98 = irdl.base "!builtin.tensor"
    %r99 = irdl.base "!builtin.tensor"
    %r100 = irdl.base "!builtin.tensor"
    %r101 = irdl.base "!builtin.tensor"
    %r102 = irdl.base "!builtin.tensor"
    %r103 = irdl.base "!builtin.tensor"
    %r104 = irdl.base "!builtin.tensor"
    %r105 = irdl.base "!builtin.tensor"
    %r106 = irdl.base "!builtin.tensor"
    %r107 = irdl.base "!builtin.tensor"
    %r108 = irdl.base "!builtin.tensor"
    %r109 = irdl.base "!builtin.tensor"
    %r110 = irdl.base "!builtin.tensor"
    %r111 = irdl.base "!builtin.tensor"
    %r112 = irdl.base "!builtin.tensor"
    %r113 = irdl.base "!builtin.tensor"
    %r114 = irdl.base "!builtin.tensor"
    %r115 = irdl.base "!builtin.tensor"
    %r116 = irdl.base "!builtin.tensor"
    %r117 = irdl.base "!builtin.tensor"
    %r118 = irdl.base "!builtin.tensor"
    %r119 = irdl.base "!builtin.tensor"
    %r120 = irdl.base "!builtin.tensor"
    %r121 = irdl.base "!builtin.tensor"
    %r122 = irdl.base "!builtin.tensor"
    %r123 = irdl.base "!builtin.tensor"
    %r124 = irdl.base "!builtin.tensor"
    %r125 = irdl.base "!builtin.tensor"
    %r126 = irdl.base "!builtin.tensor"
    %r127 = irdl.base "!builtin.tensor"
    %r128 = irdl.base "!builtin.tensor"
    %r129 = irdl.base "!builtin.tensor"
    %r130 = irdl.base "!builtin.tensor"
    %r131 = irdl.base "!builtin.tensor"
    %r132 = irdl.base "!builtin.tensor"
    %r133 = irdl.base "!builtin.tensor"
    %r134 = irdl.base "!builtin.tensor"
    %r135 = irdl.base "!builtin.tensor"
    %r136 = irdl.base "!builtin.tensor"
    %r137 = irdl.base "!builtin.tensor"
    %r138 = irdl.base "!builtin.tensor"
    %r139 = irdl.base "!builtin.tensor"
    %r140 = irdl.base "!builtin.tensor"
    %r141 = irdl.base "!builtin.tensor"
    %r142 = irdl.base "!builtin.tensor"
    %r143 = irdl.base "!builtin.tensor"
    %r144 = irdl.base "!builtin.tensor"
    %r145 = irdl.base "!builtin.tensor"
    %r146 = irdl.base "!builtin.tensor"
    %r147 = irdl.base "!builtin.tensor"
    %r148 = irdl.base "!builtin.tensor"
    %r149 = irdl.base "!builtin.tensor"
    %r150 = irdl.base "!builtin.tensor"
    %r151 = irdl.base "!builtin.tensor"
    %r152 = irdl.base "!builtin.tensor"
    %r153 = irdl.base "!builtin.tensor"
    %r154 = irdl.base "!builtin.tensor"
    %r155 = irdl.base "!builtin.tensor"
    %r156 = irdl.base "!builtin.tensor"
    %r157 = irdl.base "!builtin.tensor"
    %r158 = irdl.base "!builtin.tensor"
    %r159 = irdl.base "!builtin.tensor"
    %r160 = irdl.base "!builtin.tensor"
    %r161 = irdl.base "!builtin.tensor"
    %r162 = irdl.base "!builtin.tensor"
    %r163 = irdl.base "!builtin.tensor"
    %r164 = irdl.base "!builtin.tensor"
    %r165 = irdl.base "!builtin.tensor"
    %r166 = irdl.base "!builtin.tensor"
    %r167 = irdl.base "!builtin.tensor"
    %r168 = irdl.base "!builtin.tensor"
    %r169 = irdl.base "!builtin.tensor"
    %r170 = irdl.base "!builtin.tensor"
    %r171 = irdl.base "!builtin.tensor"
    %r172 = irdl.base "!builtin.tensor"
    %r173 = irdl.base "!builtin.tensor"
    %r174 = irdl.base "!builtin.tensor"
    %r175 = irdl.base "!builtin.tensor"
    %r176 = irdl.base "!builtin.tensor"
    %r177 = irdl.base "!builtin.tensor"
    %r178 = irdl.base "!builtin.tensor"
    %r179 = irdl.base "!builtin.tensor"
    %r180 = irdl.base "!builtin.tensor"
    %r181 = irdl.base "!builtin.tensor"
    %r182 = irdl.base "!builtin.tensor"
    %r183 = irdl.base "!builtin.tensor"
    %r184 = irdl.base "!builtin.tensor"
    %r185 = irdl.base "!builtin.tensor"
    %r186 = irdl.base "!builtin.tensor"
    %r187 = irdl.base "!builtin.tensor"
    %r188 = irdl.base "!builtin.tensor"
    %r189 = irdl.base "!builtin.tensor"
    %r190 = irdl.base "!builtin.tensor"
    %r191 = irdl.base "!builtin.tensor"
    %r192 = irdl.base "!builtin.tensor"
    %r193 = irdl.base "!builtin.tensor"
    %r194 = irdl.base "!builtin.tensor"
    %r195 = irdl.base "!builtin.tensor"
    %r196 = irdl.base "!builtin.tensor"
    %r197 = irdl.base "!builtin.tensor"
    %r198 = irdl.base "!builtin.tensor"
    %r199 = irdl.base "!builtin.tensor"
    %r200 = irdl.base "!builtin.tensor"
    %r201 = irdl.base "!builtin.tensor"
    %r202 = irdl.base "!builtin.tensor"
    %r203 = irdl.base "!builtin.tensor"
    %r204 = irdl.base "!builtin.tensor"
    %r205 = irdl.base "!builtin.tensor"
    %r206 = irdl.base "!builtin.tensor"
    %r207 = irdl.base "!builtin.tensor"
    %r208 = irdl.base "!builtin.tensor"
    %r209 = irdl.base "!builtin.tensor"
    %r210 = irdl.base "!builtin.tensor"
    %r211 = irdl.base "!builtin.tensor"
    %r212 = irdl.base "!builtin.tensor"
    %r213 = irdl.base "!builtin.tensor"
    %r214 = irdl.base "!builtin.tensor"
    %r215 = irdl.base "!builtin.tensor"
    %r216 = irdl.base "!builtin.tensor"
    %r217 = irdl.base "!builtin.tensor"
    %r218 = irdl.base "!builtin.tensor"
    %r219 = irdl.base "!builtin.tensor"
    %r220 = irdl.base "!builtin.tensor"
    %r221 = irdl.base "!builtin.tensor"
    %r222 = irdl.base "!builtin.tensor"
    %r223 = irdl.base "!builtin.tensor"
    %r224 = irdl.base "!builtin.tensor"
    %r225 = irdl.base "!builtin.tensor"
    %r226 = irdl.base "!builtin.tensor"
    %r227 = irdl.base "!builtin.tensor"
    %r228 = irdl.base "!builtin.tensor"
    %r229 = irdl.base "!builtin.tensor"
    %r230 = irdl.base "!builtin.tensor"
    %r231 = irdl.base "!builtin.tensor"
    %r232 = irdl.base "!builtin.tensor"
    %r233 = irdl.base "!builtin.tensor"
    %r234 = irdl.base "!builtin.tensor"
    %r235 = irdl.base "!builtin.tensor"
    %r236 = irdl.base "!builtin.tensor"
    %r237 = irdl.base "!builtin.tensor"
    %r238 = irdl.base "!builtin.tensor"
    %r239 = irdl.base "!builtin.tensor"
    %r240 = irdl.base "!builtin.tensor"
    %r241 = irdl.base "!builtin.tensor"
    %r242 = irdl.base "!builtin.tensor"
    %r243 = irdl.base "!builtin.tensor"
    %r244 = irdl.base "!builtin.tensor"
    %r245 = irdl.base "!builtin.tensor"
    %r246 = irdl.base "!builtin.tensor"
    %r247 = irdl.base "!builtin.tensor"
    %r248 = irdl.base "!builtin.tensor"
    %r249 = irdl.base "!builtin.tensor"
    %r250 = irdl.base "!builtin.tensor"
    %r251 = irdl.base "!builtin.tensor"
    %r252 = irdl.base "!builtin.tensor"
    %r253 = irdl.base "!builtin.tensor"
    %r254 = irdl.base "!builtin.tensor"
    %r255 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result0: variadic %r0, result1: variadic %r1, result2: variadic %r2, result3: variadic %r3, result4: variadic %r4, result5: variadic %r5, result6: variadic %r6, result7: variadic %r7, result8: variadic %r8, result9: variadic %r9, result10: variadic %r10, result11: variadic %r11, result12: variadic %r12, result13: variadic %r13, result14: variadic %r14, result15: variadic %r15, result16: variadic %r16, result17: variadic %r17, result18: variadic %r18, result19: variadic %r19, result20: variadic %r20, result21: variadic %r21, result22: variadic %r22, result23: variadic %r23, result24: variadic %r24, result25: variadic %r25, result26: variadic %r26, result27: variadic %r27, result28: variadic %r28, result29: variadic %r29, result30: variadic %r30, result31: variadic %r31, result32: variadic %r32, result33: variadic %r33, result34: variadic %r34, result35: variadic %r35, result36: variadic %r36, result37: variadic %r37, result38: variadic %r38, result39: variadic %r39, result40: variadic %r40, result41: variadic %r41, result42: variadic %r42, result43: variadic %r43, result44: variadic %r44, result45: variadic %r45, result46: variadic %r46, result47: variadic %r47, result48: variadic %r48, result49: variadic %r49, result50: variadic %r50, result51: variadic %r51, result52: variadic %r52, result53: variadic %r53, result54: variadic %r54, result55: variadic %r55, result56: variadic %r56, result57: variadic %r57, result58: variadic %r58, result59: variadic %r59, result60: variadic %r60, result61: variadic %r61, result62: variadic %r62, result63: variadic %r63, result64: variadic %r64, result65: variadic %r65, result66: variadic %r66, result67: variadic %r67, result68: variadic %r68, result69: variadic %r69, result70: variadic %r70, result71: variadic %r71, result72: variadic %r72, result73: variadic %r73, result74: variadic %r74, result75: variadic %r75, result76: variadic %r76, result77: variadic %r77, result78: variadic %r78, result79: variadic %r79, result80: variadic %r80, result81: variadic %r81, result82: variadic %r82, result83: variadic %r83, result84: variadic %r84, result85: variadic %r85, result86: variadic %r86, result87: variadic %r87, result88: variadic %r88, result89: variadic %r89, result90: variadic %r90, result91: variadic %r91, result92: variadic %r92, result93: variadic %r93, result94: variadic %r94, result95: variadic %r95, result96: variadic %r96, result97: variadic %r97, result98: variadic %r98, result99: variadic %r99, result100: variadic %r100, result101: variadic %r101, result102: variadic %r102, result103: variadic %r103, result104: variadic %r104, result105: variadic %r105, result106: variadic %r106, result107: variadic %r107, result108: variadic %r108, result109: variadic %r109, result110: variadic %r110, result111: variadic %r111, result112: variadic %r112, result113: variadic %r113, result114: variadic %r114, result115: variadic %r115, result116: variadic %r116, result117: variadic %r117, result118: variadic %r118, result119: variadic %r119, result120: variadic %r120, result121: variadic %r121, result122: variadic %r122, result123: variadic %r123, result124: variadic %r124, result125: variadic %r125, result126: variadic %r126, result127: variadic %r127, result128: variadic %r128, result129: variadic %r129, result130: variadic %r130, result131: variadic %r131, result132: variadic %r132, result133: variadic %r133, result134: variadic %r134, result135: variadic %r135, result136: variadic %r136, result137: variadic %r137, result138: variadic %r138, result139: variadic %r139, result140: variadic %r140, result141: variadic %r141, result142: variadic %r142, result143: variadic %r143, result144: variadic %r144, result145: variadic %r145, result146: variadic %r146, result147: variadic %r147, result148: variadic %r148, result149: variadic %r149, result150: variadic %r150, result151: variadic %r151, result152: variadic %r152, result153: variadic %r153, result154: variadic %r154, result155: variadic %r155, result156: variadic %r156, result157: variadic %r157, result158: variadic %r158, result159: variadic %r159, result160: variadic %r160, result161: variadic %r161, result162: variadic %r162, result163: variadic %r163, result164: variadic %r164, result165: variadic %r165, result166: variadic %r166, result167: variadic %r167, result168: variadic %r168, result169: variadic %r169, result170: variadic %r170, result171: variadic %r171, result172: variadic %r172, result173: variadic %r173, result174: variadic %r174, result175: variadic %r175, result176: variadic %r176, result177: variadic %r177, result178: variadic %r178, result179: variadic %r179, result180: variadic %r180, result181: variadic %r181, result182: variadic %r182, result183: variadic %r183, result184: variadic %r184, result185: variadic %r185, result186: variadic %r186, result187: variadic %r187, result188: variadic %r188, result189: variadic %r189, result190: variadic %r190, result191: variadic %r191, result192: variadic %r192, result193: variadic %r193, result194: variadic %r194, result195: variadic %r195, result196: variadic %r196, result197: variadic %r197, result198: variadic %r198, result199: variadic %r199, result200: variadic %r200, result201: variadic %r201, result202: variadic %r202, result203: variadic %r203, result204: variadic %r204, result205: variadic %r205, result206: variadic %r206, result207: variadic %r207, result208: variadic %r208, result209: variadic %r209, result210: variadic %r210, result211: variadic %r211, result212: variadic %r212, result213: variadic %r213, result214: variadic %r214, result215: variadic %r215, result216: variadic %r216, result217: variadic %r217, result218: variadic %r218, result219: variadic %r219, result220: variadic %r220, result221: variadic %r221, result222: variadic %r222, result223: variadic %r223, result224: variadic %r224, result225: variadic %r225, result226: variadic %r226, result227: variadic %r227, result228: variadic %r228, result229: variadic %r229, result230: variadic %r230, result231: variadic %r231, result232: variadic %r232, result233: variadic %r233, result234: variadic %r234, result235: variadic %r235, result236: variadic %r236, result237: variadic %r237, result238: variadic %r238, result239: variadic %r239, result240: variadic %r240, result241: variadic %r241, result242: variadic %r242, result243: variadic %r243, result244: variadic %r244, result245: variadic %r245, result246: variadic %r246, result247: variadic %r247, result248: variadic %r248, result249: variadic %r249, result250: variadic %r250, result251: variadic %r251, result252: variadic %r252, result253: variadic %r253, result254: variadic %r254, result255: variadic %r255)
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

  // rlx.triu: upper triangle of the last two dims, keeping diagonals >= `k`; optional `k` (i64, absent = 0)
  irdl.operation @triu {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(x: %t)
    irdl.results(result: %t)
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

  // rlx.nll_loss: negative log likelihood: predictions (N, C, d...) or (C,), targets (N, d...) or () of i32/i64, optional weights (C,); `reduction` "mean" | "sum" | "none"; optional `ignore_index` (i64); `reduction` absent = "mean"
  irdl.operation @nll_loss {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %o2 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(predictions: %o0, targets: %o1, weights: optional %o2)
    irdl.results(result: %r0)
  }

  // rlx.conv2d: 2-D convolution, NCHW data, OIHW weight; padding is (top, left, bottom, right); optional `strides` (absent = 1, 1), `padding` (absent = 0, 0, 0, 0), `dilation` (absent = 1, 1), `groups` (i64, absent = 1)
  irdl.operation @conv2d {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(data: %o0, weight: %o1)
    irdl.results(result: %r0)
  }

  // rlx.max_pool2d: 2-D max pooling, NCHW; optional `dilation` (absent = 1) and `ceil_mode` (BoolAttr); optional `strides` (absent = 1, 1), `padding` (absent = 0, 0, 0, 0)
  irdl.operation @max_pool2d {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    irdl.operands(data: %o0)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size}
  }

  // rlx.avg_pool2d: 2-D average pooling, NCHW; optional `dilation`, `ceil_mode`, `count_include_pad` (BoolAttr, absent = false); optional `strides` (absent = 1, 1), `padding` (absent = 0, 0, 0, 0)
  irdl.operation @avg_pool2d {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    irdl.operands(data: %o0)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size}
  }

  // rlx.layer_norm: (x - mean) / sqrt(var + epsilon) * gamma + beta over `axes`; gamma and beta have the normalised dims' shape; optional `epsilon` (f64, absent = 1e-5)
  irdl.operation @layer_norm {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %o2 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_axes = irdl.base "#builtin.dense_array"
    irdl.operands(data: %o0, gamma: %o1, beta: %o2)
    irdl.results(result: %r0)
    irdl.attributes {"axes" = %a_axes}
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
    %o16 = irdl.any
    %o17 = irdl.any
    %o18 = irdl.any
    %o19 = irdl.any
    %o20 = irdl.any
    %o21 = irdl.any
    %o22 = irdl.any
    %o23 = irdl.any
    %o24 = irdl.any
    %o25 = irdl.any
    %o26 = irdl.any
    %o27 = irdl.any
    %o28 = irdl.any
    %o29 = irdl.any
    %o30 = irdl.any
    %o31 = irdl.any
    %o32 = irdl.any
    %o33 = irdl.any
    %o34 = irdl.any
    %o35 = irdl.any
    %o36 = irdl.any
    %o37 = irdl.any
    %o38 = irdl.any
    %o39 = irdl.any
    %o40 = irdl.any
    %o41 = irdl.any
    %o42 = irdl.any
    %o43 = irdl.any
    %o44 = irdl.any
    %o45 = irdl.any
    %o46 = irdl.any
    %o47 = irdl.any
    %o48 = irdl.any
    %o49 = irdl.any
    %o50 = irdl.any
    %o51 = irdl.any
    %o52 = irdl.any
    %o53 = irdl.any
    %o54 = irdl.any
    %o55 = irdl.any
    %o56 = irdl.any
    %o57 = irdl.any
    %o58 = irdl.any
    %o59 = irdl.any
    %o60 = irdl.any
    %o61 = irdl.any
    %o62 = irdl.any
    %o63 = irdl.any
    %o64 = irdl.any
    %o65 = irdl.any
    %o66 = irdl.any
    %o67 = irdl.any
    %o68 = irdl.any
    %o69 = irdl.any
    %o70 = irdl.any
    %o71 = irdl.any
    %o72 = irdl.any
    %o73 = irdl.any
    %o74 = irdl.any
    %o75 = irdl.any
    %o76 = irdl.any
    %o77 = irdl.any
    %o78 = irdl.any
    %o79 = irdl.any
    %o80 = irdl.any
    %o81 = irdl.any
    %o82 = irdl.any
    %o83 = irdl.any
    %o84 = irdl.any
    %o85 = irdl.any
    %o86 = irdl.any
    %o87 = irdl.any
    %o88 = irdl.any
    %o89 = irdl.any
    %o90 = irdl.any
    %o91 = irdl.any
    %o92 = irdl.any
    %o93 = irdl.any
    %o94 = irdl.any
    %o95 = irdl.any
    %o96 = irdl.any
    %o97 = irdl.any
    %o98 = irdl.any
    %o99 = irdl.any
    %o100 = irdl.any
    %o101 = irdl.any
    %o102 = irdl.any
    %o103 = irdl.any
    %o104 = irdl.any
    %o105 = irdl.any
    %o106 = irdl.any
    %o107 = irdl.any
    %o108 = irdl.any
    %o109 = irdl.any
    %o110 = irdl.any
    %o111 = irdl.any
    %o112 = irdl.any
    %o113 = irdl.any
    %o114 = irdl.any
    %o115 = irdl.any
    %o116 = irdl.any
    %o117 = irdl.any
    %o118 = irdl.any
    %o119 = irdl.any
    %o120 = irdl.any
    %o121 = irdl.any
    %o122 = irdl.any
    %o123 = irdl.any
    %o124 = irdl.any
    %o125 = irdl.any
    %o126 = irdl.any
    %o127 = irdl.any
    %o128 = irdl.any
    %o129 = irdl.any
    %o130 = irdl.any
    %o131 = irdl.any
    %o132 = irdl.any
    %o133 = irdl.any
    %o134 = irdl.any
    %o135 = irdl.any
    %o136 = irdl.any
    %o137 = irdl.any
    %o138 = irdl.any
    %o139 = irdl.any
    %o140 = irdl.any
    %o141 = irdl.any
    %o142 = irdl.any
    %o143 = irdl.any
    %o144 = irdl.any
    %o145 = irdl.any
    %o146 = irdl.any
    %o147 = irdl.any
    %o148 = irdl.any
    %o149 = irdl.any
    %o150 = irdl.any
    %o151 = irdl.any
    %o152 = irdl.any
    %o153 = irdl.any
    %o154 = irdl.any
    %o155 = irdl.any
    %o156 = irdl.any
    %o157 = irdl.any
    %o158 = irdl.any
    %o159 = irdl.any
    %o160 = irdl.any
    %o161 = irdl.any
    %o162 = irdl.any
    %o163 = irdl.any
    %o164 = irdl.any
    %o165 = irdl.any
    %o166 = irdl.any
    %o167 = irdl.any
    %o168 = irdl.any
    %o169 = irdl.any
    %o170 = irdl.any
    %o171 = irdl.any
    %o172 = irdl.any
    %o173 = irdl.any
    %o174 = irdl.any
    %o175 = irdl.any
    %o176 = irdl.any
    %o177 = irdl.any
    %o178 = irdl.any
    %o179 = irdl.any
    %o180 = irdl.any
    %o181 = irdl.any
    %o182 = irdl.any
    %o183 = irdl.any
    %o184 = irdl.any
    %o185 = irdl.any
    %o186 = irdl.any
    %o187 = irdl.any
    %o188 = irdl.any
    %o189 = irdl.any
    %o190 = irdl.any
    %o191 = irdl.any
    %o192 = irdl.any
    %o193 = irdl.any
    %o194 = irdl.any
    %o195 = irdl.any
    %o196 = irdl.any
    %o197 = irdl.any
    %o198 = irdl.any
    %o199 = irdl.any
    %o200 = irdl.any
    %o201 = irdl.any
    %o202 = irdl.any
    %o203 = irdl.any
    %o204 = irdl.any
    %o205 = irdl.any
    %o206 = irdl.any
    %o207 = irdl.any
    %o208 = irdl.any
    %o209 = irdl.any
    %o210 = irdl.any
    %o211 = irdl.any
    %o212 = irdl.any
    %o213 = irdl.any
    %o214 = irdl.any
    %o215 = irdl.any
    %o216 = irdl.any
    %o217 = irdl.any
    %o218 = irdl.any
    %o219 = irdl.any
    %o220 = irdl.any
    %o221 = irdl.any
    %o222 = irdl.any
    %o223 = irdl.any
    %o224 = irdl.any
    %o225 = irdl.any
    %o226 = irdl.any
    %o227 = irdl.any
    %o228 = irdl.any
    %o229 = irdl.any
    %o230 = irdl.any
    %o231 = irdl.any
    %o232 = irdl.any
    %o233 = irdl.any
    %o234 = irdl.any
    %o235 = irdl.any
    %o236 = irdl.any
    %o237 = irdl.any
    %o238 = irdl.any
    %o239 = irdl.any
    %o240 = irdl.any
    %o241 = irdl.any
    %o242 = irdl.any
    %o243 = irdl.any
    %o244 = irdl.any
    %o245 = irdl.any
    %o246 = irdl.any
    %o247 = irdl.any
    %o248 = irdl.any
    %o249 = irdl.any
    %o250 = irdl.any
    %o251 = irdl.any
    %o252 = irdl.any
    %o253 = irdl.any
    %o254 = irdl.any
    %o255 = irdl.any
    %r0 = irdl.base "!builtin.tuple"
    irdl.operands(x0: variadic %o0, x1: variadic %o1, x2: variadic %o2, x3: variadic %o3, x4: variadic %o4, x5: variadic %o5, x6: variadic %o6, x7: variadic %o7, x8: variadic %o8, x9: variadic %o9, x10: variadic %o10, x11: variadic %o11, x12: variadic %o12, x13: variadic %o13, x14: variadic %o14, x15: variadic %o15, x16: variadic %o16, x17: variadic %o17, x18: variadic %o18, x19: variadic %o19, x20: variadic %o20, x21: variadic %o21, x22: variadic %o22, x23: variadic %o23, x24: variadic %o24, x25: variadic %o25, x26: variadic %o26, x27: variadic %o27, x28: variadic %o28, x29: variadic %o29, x30: variadic %o30, x31: variadic %o31, x32: variadic %o32, x33: variadic %o33, x34: variadic %o34, x35: variadic %o35, x36: variadic %o36, x37: variadic %o37, x38: variadic %o38, x39: variadic %o39, x40: variadic %o40, x41: variadic %o41, x42: variadic %o42, x43: variadic %o43, x44: variadic %o44, x45: variadic %o45, x46: variadic %o46, x47: variadic %o47, x48: variadic %o48, x49: variadic %o49, x50: variadic %o50, x51: variadic %o51, x52: variadic %o52, x53: variadic %o53, x54: variadic %o54, x55: variadic %o55, x56: variadic %o56, x57: variadic %o57, x58: variadic %o58, x59: variadic %o59, x60: variadic %o60, x61: variadic %o61, x62: variadic %o62, x63: variadic %o63, x64: variadic %o64, x65: variadic %o65, x66: variadic %o66, x67: variadic %o67, x68: variadic %o68, x69: variadic %o69, x70: variadic %o70, x71: variadic %o71, x72: variadic %o72, x73: variadic %o73, x74: variadic %o74, x75: variadic %o75, x76: variadic %o76, x77: variadic %o77, x78: variadic %o78, x79: variadic %o79, x80: variadic %o80, x81: variadic %o81, x82: variadic %o82, x83: variadic %o83, x84: variadic %o84, x85: variadic %o85, x86: variadic %o86, x87: variadic %o87, x88: variadic %o88, x89: variadic %o89, x90: variadic %o90, x91: variadic %o91, x92: variadic %o92, x93: variadic %o93, x94: variadic %o94, x95: variadic %o95, x96: variadic %o96, x97: variadic %o97, x98: variadic %o98, x99: variadic %o99, x100: variadic %o100, x101: variadic %o101, x102: variadic %o102, x103: variadic %o103, x104: variadic %o104, x105: variadic %o105, x106: variadic %o106, x107: variadic %o107, x108: variadic %o108, x109: variadic %o109, x110: variadic %o110, x111: variadic %o111, x112: variadic %o112, x113: variadic %o113, x114: variadic %o114, x115: variadic %o115, x116: variadic %o116, x117: variadic %o117, x118: variadic %o118, x119: variadic %o119, x120: variadic %o120, x121: variadic %o121, x122: variadic %o122, x123: variadic %o123, x124: variadic %o124, x125: variadic %o125, x126: variadic %o126, x127: variadic %o127, x128: variadic %o128, x129: variadic %o129, x130: variadic %o130, x131: variadic %o131, x132: variadic %o132, x133: variadic %o133, x134: variadic %o134, x135: variadic %o135, x136: variadic %o136, x137: variadic %o137, x138: variadic %o138, x139: variadic %o139, x140: variadic %o140, x141: variadic %o141, x142: variadic %o142, x143: variadic %o143, x144: variadic %o144, x145: variadic %o145, x146: variadic %o146, x147: variadic %o147, x148: variadic %o148, x149: variadic %o149, x150: variadic %o150, x151: variadic %o151, x152: variadic %o152, x153: variadic %o153, x154: variadic %o154, x155: variadic %o155, x156: variadic %o156, x157: variadic %o157, x158: variadic %o158, x159: variadic %o159, x160: variadic %o160, x161: variadic %o161, x162: variadic %o162, x163: variadic %o163, x164: variadic %o164, x165: variadic %o165, x166: variadic %o166, x167: variadic %o167, x168: variadic %o168, x169: variadic %o169, x170: variadic %o170, x171: variadic %o171, x172: variadic %o172, x173: variadic %o173, x174: variadic %o174, x175: variadic %o175, x176: variadic %o176, x177: variadic %o177, x178: variadic %o178, x179: variadic %o179, x180: variadic %o180, x181: variadic %o181, x182: variadic %o182, x183: variadic %o183, x184: variadic %o184, x185: variadic %o185, x186: variadic %o186, x187: variadic %o187, x188: variadic %o188, x189: variadic %o189, x190: variadic %o190, x191: variadic %o191, x192: variadic %o192, x193: variadic %o193, x194: variadic %o194, x195: variadic %o195, x196: variadic %o196, x197: variadic %o197, x198: variadic %o198, x199: variadic %o199, x200: variadic %o200, x201: variadic %o201, x202: variadic %o202, x203: variadic %o203, x204: variadic %o204, x205: variadic %o205, x206: variadic %o206, x207: variadic %o207, x208: variadic %o208, x209: variadic %o209, x210: variadic %o210, x211: variadic %o211, x212: variadic %o212, x213: variadic %o213, x214: variadic %o214, x215: variadic %o215, x216: variadic %o216, x217: variadic %o217, x218: variadic %o218, x219: variadic %o219, x220: variadic %o220, x221: variadic %o221, x222: variadic %o222, x223: variadic %o223, x224: variadic %o224, x225: variadic %o225, x226: variadic %o226, x227: variadic %o227, x228: variadic %o228, x229: variadic %o229, x230: variadic %o230, x231: variadic %o231, x232: variadic %o232, x233: variadic %o233, x234: variadic %o234, x235: variadic %o235, x236: variadic %o236, x237: variadic %o237, x238: variadic %o238, x239: variadic %o239, x240: variadic %o240, x241: variadic %o241, x242: variadic %o242, x243: variadic %o243, x244: variadic %o244, x245: variadic %o245, x246: variadic %o246, x247: variadic %o247, x248: variadic %o248, x249: variadic %o249, x250: variadic %o250, x251: variadic %o251, x252: variadic %o252, x253: variadic %o253, x254: variadic %o254, x255: variadic %o255)
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

  // rlx.conv2d_transpose: transposed 2-D convolution (gradient of conv2d w.r.t. its data): NCHW data, IOHW weight (C_in, C_out/groups, KH, KW); out = (in - 1) * stride - pad_begin - pad_end + dilation * (k - 1) + output_padding + 1; optional `output_padding` (array<i64>, absent = 0); optional `strides` (absent = 1, 1), `padding` (absent = 0, 0, 0, 0), `dilation` (absent = 1, 1), `groups` (i64, absent = 1)
  irdl.operation @conv2d_transpose {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(data: %o0, weight: %o1)
    irdl.results(result: %r0)
  }

  // rlx.max_pool2d_backward: gradient of max_pool2d: routes each `output_grad` element to the arg-max of its window in `data`; same attributes as max_pool2d; result has `data`'s type; optional `strides` (absent = 1, 1), `padding` (absent = 0, 0, 0, 0)
  irdl.operation @max_pool2d_backward {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    irdl.operands(output_grad: %o0, data: %o1)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size}
  }

  // rlx.avg_pool2d_backward: gradient of avg_pool2d: spreads each `output_grad` element evenly over its window; same attributes as avg_pool2d; result has `data`'s type; optional `strides` (absent = 1, 1), `padding` (absent = 0, 0, 0, 0)
  irdl.operation @avg_pool2d_backward {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    irdl.operands(output_grad: %o0, data: %o1)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size}
  }

  // rlx.collapse_sum_to: sums `x` over the axes that numpy broadcasting expanded from the result type's shape (the adjoint of broadcast_to); the result shape must broadcast to x's shape
  irdl.operation @collapse_sum_to {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    irdl.operands(x: %o0)
    irdl.results(result: %r0)
  }

  // rlx.max_pool2d_with_indices: max_pool2d that also returns each window's arg-max: the row-major position ky * KW + kx of its first maximum (NaN counting as the maximum), as an unsigned integer tensor of the pooled shape (i8, i16, i32 or i64 holding the window's positions); same attributes as max_pool2d; made by rlx-pool-indices for a pool whose input also feeds its max_pool2d_backward
  irdl.operation @max_pool2d_with_indices {
    %o0 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %r1 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    irdl.operands(data: %o0)
    irdl.results(result: %r0, indices: %r1)
    irdl.attributes {"pool_size" = %a_pool_size}
  }

  // rlx.max_pool2d_indices_backward: max_pool2d_backward from saved arg-max `indices` (max_pool2d_with_indices's): routes each `output_grad` element to the input position its window's index names; same attributes as max_pool2d; the result type carries the input's shape
  irdl.operation @max_pool2d_indices_backward {
    %o0 = irdl.base "!builtin.tensor"
    %o1 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %a_pool_size = irdl.base "#builtin.dense_array"
    irdl.operands(output_grad: %o0, indices: %o1)
    irdl.results(result: %r0)
    irdl.attributes {"pool_size" = %a_pool_size}
  }
}
