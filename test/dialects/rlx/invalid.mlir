// Errors reported by rlx-verify (what IRDL cannot check).
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-verify

func.func @result_mismatch(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'rlx.add' op result type tensor<3xf32> does not match inferred tensor<2x3xf32>}}
  %0 = "rlx.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.multiply' op shapes (2, 3) and (4,) are not broadcastable}}
  %0 = "rlx.multiply"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @int_element_type(%a: tensor<3xi32>) {
  // expected-error @+1 {{'rlx.exp' op operand element type must be one of f16, bf16, f32, f64, got i32}}
  %0 = "rlx.exp"(%a) : (tensor<3xi32>) -> tensor<3xi32>
  return
}

// -----

func.func @mixed_element_types(%a: tensor<3xf32>, %b: tensor<3xf64>) {
  // expected-error @+1 {{'rlx.add' op lhs and rhs must have the same element type, got f32 and f64}}
  %0 = "rlx.add"(%a, %b) : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return
}

// -----

func.func @compare_result(%a: tensor<3xf32>) {
  // expected-error @+1 {{'rlx.less' op result type tensor<3xf32> does not match inferred tensor<3xi1>}}
  %0 = "rlx.less"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @where_condition(%a: tensor<3xf32>) {
  // expected-error @+1 {{'rlx.where' op condition element type must be one of i1, got f32}}
  %0 = "rlx.where"(%a, %a, %a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @matmul_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.matmul' op contraction dimensions differ: lhs (2, 3) has 3, rhs (4, 5) has 4}}
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_vector(%a: tensor<3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'rlx.matmul' op result type tensor<1x4xf32> does not match inferred tensor<4xf32>}}
  %0 = "rlx.matmul"(%a, %b) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @axis_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.sum' op axis 2 is out of range for rank 2}}
  %0 = "rlx.sum"(%a) {axis = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @axis_duplicated(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.mean' op axis [1, -1] has duplicates}}
  %0 = "rlx.mean"(%a) {axis = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @keepdims_result(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.max' op result type tensor<2xf32> does not match inferred tensor<2x1xf32>}}
  %0 = "rlx.max"(%a) {axis = array<i64: -1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @axis_not_array(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.softmax' op attribute 'axis' must be array<i64>, got 1 : i64}}
  %0 = "rlx.softmax"(%a) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @keepdims_not_bool(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.sum' op attribute 'keepdims' must be BoolAttr, got 1 : i64}}
  %0 = "rlx.sum"(%a) {keepdims = 1 : i64} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @softmax_two_axes(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.softmax' op 'axis' must hold exactly one axis, got 2}}
  %0 = "rlx.softmax"(%a) {axis = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @split_sections(%a: tensor<2x3xf32>) {
  // Relax semantics: 3 elements in 2 sections are pieces of 2 and 1.
  // expected-error @+2 {{'rlx.split' op result #0 type tensor<2x1xf32> does not match inferred tensor<2x2xf32>}}
  // expected-error @+1 {{'rlx.split' op result #1 type tensor<2x2xf32> does not match inferred tensor<2x1xf32>}}
  %0:2 = "rlx.split"(%a) {axis = array<i64: 1>, sections = 2 : i64, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @split_both(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{'rlx.split' op requires exactly one of 'sections' and 'indices'}}
  %0:2 = "rlx.split"(%a) {axis = array<i64: 1>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @split_count(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{'rlx.split' op has 2 result(s), inferred 4}}
  %0:2 = "rlx.split"(%a) {axis = array<i64: 1>, sections = 4 : i64, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @concat_shapes(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{'rlx.concat' op operand #1 has shape (3, 3), incompatible with (2, 3) outside axis 1}}
  %0 = "rlx.concat"(%a, %b) {axis = array<i64: 1>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.reshape' op cannot reshape (2, 3) (6 elements) to (4,) (4 elements)}}
  %0 = "rlx.reshape"(%a) : (tensor<2x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @broadcast_to_bad(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.broadcast_to' op cannot broadcast (2, 3) to (4, 3)}}
  %0 = "rlx.broadcast_to"(%a) : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @permute_dims_rank(%a: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'rlx.permute_dims' op 'axes' must have 3 entries (the rank), got 2}}
  %0 = "rlx.permute_dims"(%a) {axes = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return
}

// -----

func.func @squeeze_non_unit(%a: tensor<2x1xf32>) {
  // expected-error @+1 {{'rlx.squeeze' op cannot squeeze axis 0 of size 2}}
  %0 = "rlx.squeeze"(%a) {axis = array<i64: 0>} : (tensor<2x1xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @take_indices(%a: tensor<2x3xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'rlx.take' op indices element type must be one of i32, i64, got f32}}
  %0 = "rlx.take"(%a, %i) {axis = array<i64: 0>} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @triu_rank(%a: tensor<3xf32>) {
  // expected-error @+1 {{'rlx.triu' op operand must have rank >= 2, got 1}}
  %0 = "rlx.triu"(%a) {k = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @conv2d_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op weight has 3 input channels, expected 4 (data channels 4 / groups 1)}}
  %0 = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_output(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op result type tensor<1x8x6x6xf32> does not match inferred tensor<1x8x3x3xf32>}}
  %0 = "rlx.conv2d"(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_padding_entries(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op 'padding' must have 4 entries, got 2}}
  %0 = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @pool_output(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d' op result type tensor<1x4x8x8xf32> does not match inferred tensor<1x4x4x4xf32>}}
  %0 = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @pool_backward_grad(%g: tensor<1x4x3x3xf32>, %x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d_backward' op output_grad has shape (1, 4, 3, 3), expected the pooled shape (1, 4, 4, 4)}}
  %0 = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x4x3x3xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @layer_norm_gamma(%x: tensor<2x5xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{'rlx.layer_norm' op gamma must have shape (5,), got (2,)}}
  %0 = "rlx.layer_norm"(%x, %g, %g) {axes = array<i64: -1>, epsilon = 1.0e-05 : f64} : (tensor<2x5xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @layer_norm_epsilon_kind(%x: tensor<2x5xf32>, %g: tensor<5xf32>) {
  // expected-error @+1 {{'rlx.layer_norm' op attribute 'epsilon' must be f64 float, got 5.000000e-01 : f32}}
  %0 = "rlx.layer_norm"(%x, %g, %g) {axes = array<i64: -1>, epsilon = 0.5 : f32} : (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @nll_reduction(%p: tensor<4x10xf32>, %t: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.nll_loss' op 'reduction' must be "mean", "sum" or "none", got 'avg'}}
  %0 = "rlx.nll_loss"(%p, %t) {reduction = "avg"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @nll_targets(%p: tensor<4x10xf32>, %t: tensor<5xi64>) {
  // expected-error @+1 {{'rlx.nll_loss' op targets shape (5,) does not match predictions (4, 10) (expected (4,))}}
  %0 = "rlx.nll_loss"(%p, %t) {reduction = "mean"} : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_shapes(%p: tensor<4x10xf32>, %l: tensor<4x9xf32>) {
  // expected-error @+1 {{'rlx.cross_entropy_with_logits' op predictions (4, 10) and labels (4, 9) must have the same shape}}
  %0 = "rlx.cross_entropy_with_logits"(%p, %l) : (tensor<4x10xf32>, tensor<4x9xf32>) -> tensor<f32>
  return
}

// -----

func.func @full_fill_rank(%f: tensor<1xf32>) {
  // expected-error @+1 {{'rlx.full' op fill must be a 0-d tensor, got tensor<1xf32>}}
  %0 = "rlx.full"(%f) : (tensor<1xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @astype_shape(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.astype' op result shape (3, 2) differs from operand shape (2, 3)}}
  %0 = "rlx.astype"(%a) : (tensor<2x3xf32>) -> tensor<3x2xf16>
  return
}

// -----

func.func @zeros_dtype() {
  // expected-error @+1 {{'rlx.zeros' op result element type must be one of f16, bf16, f32, f64, i1, i32, i64, got i8}}
  %0 = "rlx.zeros"() : () -> tensor<2xi8>
  return
}

// -----

func.func @tuple_index(%t: tuple<tensor<2xf32>, tensor<3xf32>>) {
  // expected-error @+1 {{'rlx.tuple_get_item' op index 2 is out of range for a tuple of 2 element(s)}}
  %0 = "rlx.tuple_get_item"(%t) {index = 2 : i64} : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<2xf32>
  return
}

// -----

func.func @tuple_get_item_type(%t: tuple<tensor<2xf32>, tensor<3xf32>>) {
  // expected-error @+1 {{'rlx.tuple_get_item' op result type tensor<2xf32> does not match inferred tensor<3xf32>}}
  %0 = "rlx.tuple_get_item"(%t) {index = 1 : i64} : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<2xf32>
  return
}

// -----

func.func @tuple_type(%a: tensor<2xf32>) {
  // expected-error @+1 {{'rlx.tuple' op result type tuple<tensor<2xf32>> does not match inferred tuple<tensor<2xf32>, tensor<2xf32>>}}
  %0 = "rlx.tuple"(%a, %a) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>>
  return
}

// -----

func.func @collapse_sum_to_bad(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.collapse_sum_to' op cannot collapse (2, 3) to (4,): (4,) does not broadcast to (2, 3)}}
  %0 = "rlx.collapse_sum_to"(%a) : (tensor<2x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @no_grad_operand(%a: i32) {
  // expected-error @+1 {{'grad.no_grad' op operand must be a tensor or a tuple, got i32}}
  %0 = "grad.no_grad"(%a) : (i32) -> i32
  return
}

// -----

// A 'sections' far beyond the results is refused before any piece is sized
// (it made a list of 2^63 sizes: gradir-opt hung, growing).
func.func @split_sections_huge(%a: tensor<3x4xf32>) {
  // expected-error @+1 {{'rlx.split' op has 1 result(s), inferred 9223372036854775807}}
  %0 = "rlx.split"(%a) {axis = array<i64: 1>, sections = 9223372036854775807 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

// Every index into an empty axis is out of range (the compiled code read
// before the buffer); taking no element from one is fine.
func.func @take_empty_axis(%a: tensor<0x3xf32>, %i: tensor<2xi64>, %e: tensor<0xi64>) {
  %ok = "rlx.take"(%a, %e) {axis = array<i64: 0>} : (tensor<0x3xf32>, tensor<0xi64>) -> tensor<0x3xf32>
  // expected-error @+1 {{'rlx.take' op cannot take 2 element(s) from an empty axis 0}}
  %0 = "rlx.take"(%a, %i) {axis = array<i64: 0>, mode = "wrap"} : (tensor<0x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @take_empty_flat(%a: tensor<2x0xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'rlx.take' op cannot take 3 element(s) from an empty tensor}}
  %0 = "rlx.take"(%a, %i) : (tensor<2x0xf32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @nll_zero_classes(%p: tensor<4x0xf32>, %t: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.nll_loss' op predictions have 0 classes: none of the 4 target(s) can pick one}}
  %0 = "rlx.nll_loss"(%p, %t) : (tensor<4x0xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

// A dense_resource constant without its blob, or with too few bytes: LLVM's
// translation failed and the bindings then crashed (SIGSEGV).
func.func @resource_missing(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'arith.constant' op dense_resource<nope> has no data: the module's dialect_resources hold no blob 'nope'}}
  %c = arith.constant dense_resource<nope> : tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

func.func @resource_short(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'arith.constant' op dense_resource<blob1> has 1 byte(s) of data, its type tensor<3xf32> needs 12}}
  %c = arith.constant dense_resource<blob1> : tensor<3xf32>
  return %c : tensor<3xf32>
}
{-#
 dialect_resources: { builtin: { blob1: "0x0400000001" } }
#-}

// -----

func.func @resource_whole(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense_resource<blob2> : tensor<3xf32>
  return %c : tensor<3xf32>
}
{-#
 dialect_resources: { builtin: { blob2: "0x040000000000803F0000004000004040" } }
#-}

// -----

// Inferred sizes past int64 (gradir-opt printed "internal error: TypeError").
func.func @concat_overflow(%a: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{'rlx.concat' op the result's size 18446744073709551616 along an axis does not fit in 64 bits}}
  %r = "rlx.concat"(%a, %a, %a, %a) : (tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32>) -> tensor<0xf32>
  return
}

// -----

func.func @conv_padding_overflow(%a: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op the result's size 9223372036854775809 along an axis does not fit in 64 bits}}
  %r = "rlx.conv2d"(%a, %w) {padding = array<i64: 9223372036854775807, 0, 0, 0>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return
}

// -----

// rlx tensors are dense tensors without encodings (lowering failed later
// with an internal type mismatch).
func.func @encoding(%x: tensor<3x4xf32, 1 : i64>) {
  // expected-error @+2 {{'rlx.exp' op operand #0 has a tensor encoding, which rlx does not support: tensor<3x4xf32, 1 : i64>}}
  // expected-error @+1 {{'rlx.exp' op result #0 has a tensor encoding, which rlx does not support: tensor<3x4xf32, 1 : i64>}}
  %r = "rlx.exp"(%x) : (tensor<3x4xf32, 1 : i64>) -> tensor<3x4xf32, 1 : i64>
  return
}
