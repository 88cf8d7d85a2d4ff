// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-to-linalg
// Refusals of rlx-to-linalg, each an error at the offending op or function.

// expected-error @+2 {{function argument #0: dynamic shapes are not supported: tensor<?xf32>}}
// expected-error @+1 {{function result #0: dynamic shapes are not supported: tensor<?xf32>}}
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// expected-error @+1 {{function argument #0: element type i8 of tensor<4xi8> is not supported (one of f16, bf16, f32, f64, i1, i32, i64)}}
func.func @bad_element(%x: tensor<4xi8>) -> tensor<4xi32> {
  %0 = arith.extsi %x : tensor<4xi8> to tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// expected-error @+1 {{function result #0: type f32 is not supported (only ranked tensors and tuples of them)}}
func.func @scalar(%x: tensor<f32>) -> f32 {
  %0 = tensor.extract %x[] : tensor<f32>
  return %0 : f32
}

// -----

func.func @dynamic_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  // expected-error @+1 {{'rlx.exp' op operand must have a static shape, got tensor<?xf32>}}
  %0 = "rlx.exp"(%c) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = tensor.cast %0 : tensor<?xf32> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Invalid rlx ops are refused with the verifier's message before lowering.
func.func @mismatch(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'rlx.add' op result type tensor<3xf32> does not match inferred tensor<2x3xf32>}}
  %0 = "rlx.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @integer_exp(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'rlx.exp' op operand element type must be one of f16, bf16, f32, f64, got i32}}
  %0 = "rlx.exp"(%a) : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @layout(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error @+1 {{'rlx.conv2d' op data_layout = "NHWC" is not supported (only "NCHW")}}
  %0 = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, data_layout = "NHWC"} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @pool_layout(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{'rlx.max_pool2d' op layout = "NHWC" is not supported (only "NCHW")}}
  %0 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @take_mode(%x: tensor<4xf32>, %i: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'rlx.take' op unknown mode "nearest" (one of fast, clip, wrap)}}
  %0 = "rlx.take"(%x, %i) {axis = array<i64: 0>, mode = "nearest"} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A tuple may only reach tuple ops, markers, calls and returns.
func.func @tuple_use(%a: tensor<2xf32>) -> tensor<2xf32> {
  %t = "rlx.tuple"(%a, %a) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' takes a tuple operand, which rlx-to-linalg cannot lower}}
  %c = builtin.unrealized_conversion_cast %t : tuple<tensor<2xf32>, tensor<2xf32>> to tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

func.func @rec(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{recursive calls cannot be compiled (the compiled code has no control flow to end the recursion)}}
  %0 = func.call @rec(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A buffer no machine can allocate is refused, not left to a NULL malloc.
func.func @huge(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'rlx.broadcast_to' op tensor<1000000x1000000xf32> is too large (1000000000000 elements; one buffer may hold at most 1024 GiB)}}
  %0 = "rlx.broadcast_to"(%x) : (tensor<f32>) -> tensor<1000000x1000000xf32>
  // expected-error @+1 {{'rlx.sum' op tensor<1000000x1000000xf32> is too large}}
  %1 = "rlx.sum"(%0) : (tensor<1000000x1000000xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// max/min over an axis of size 0 have no value: refused (by the verifier), as by the
// interpreter (softmax over it is an empty result in both).
func.func @max_of_nothing(%x: tensor<3x0xf32>) -> (tensor<3xf32>, tensor<f32>, tensor<3x0xf32>) {
  // expected-error @+1 {{'rlx.max' op reduces axis 1 of size 0: the max or min of nothing has no value}}
  %0 = "rlx.max"(%x) {axis = array<i64: -1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  // expected-error @+1 {{'rlx.min' op reduces axis 1 of size 0: the max or min of nothing has no value}}
  %1 = "rlx.min"(%x) : (tensor<3x0xf32>) -> tensor<f32>
  %2 = "rlx.softmax"(%x) {axis = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3x0xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<f32>, tensor<3x0xf32>
}

// -----

// Functions of a nested module are not lowered: said at the module, not as
// "ops with unknown memory side effects" later in bufferization.
module {
  // expected-error @+1 {{rlx ops in a nested module are not lowered}}
  module {
    func.func @inner(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }
  }
}

// -----

// (rlx-verify reports it too; rlx-to-linalg is what gradir.compile runs)
func.func @resource_missing(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'arith.constant' op dense_resource<nope> has no data: the module's dialect_resources hold no blob 'nope'}}
  %c = arith.constant dense_resource<nope> : tensor<3xf32>
  %r = "rlx.add"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A call to a function declared without a body (the JIT then failed to find
// its symbol, with an unlocated error).
func.func private @ext(tensor<3xf32>) -> tensor<3xf32>
func.func @call_declaration(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{the call to '@ext' cannot be compiled: '@ext' is declared without a body (define it in the module)}}
  %r = func.call @ext(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A function named like a symbol the compiled code calls: @exp (f64 exp calls
// libm's exp, which became the function itself: SIGSEGV), @free (called as
// the deallocator: SIGABRT).
// expected-error @+1 {{function name '@exp' is reserved: the compiled code calls or defines a symbol of that name (the C library, libm, the OpenMP or GPU runtime, MLIR's C interfaces, an exported library's metadata, the run-time checks); rename the function}}
func.func @exp(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = "rlx.exp"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// The run-time checks' symbols (a loop step computed at run time).
// expected-error @+1 {{function name '@gradir_check_step' is reserved}}
func.func @gradir_check_step(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = "rlx.exp"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
