// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-pool-kernels
// RUN: not gradir-opt %s --split-input-file --rlx-pool-kernels=cpu=pentium 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: rlx-pool-kernels: unknown cpu 'pentium'
// RUN: not gradir-opt %s --split-input-file --rlx-pool-kernels=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: option 'threads' of pass 'rlx-pool-kernels' must be at least 1, got 0

// A marked pool the kernels do not take is refused at the op.
func.func @window(%x: memref<1x1x8x8xf32>, %y: memref<1x1x2x2xf32>, %w: memref<4x4xf32>) {
  // expected-error @below {{a gradir.kernel max pool must have a 2x2 or 3x3 window}}
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<4> : tensor<2xi64>} ins(%x, %w : memref<1x1x8x8xf32>, memref<4x4xf32>) outs(%y : memref<1x1x2x2xf32>)
  return
}

// -----

// A 3x3 pool of stride 2 reads the 2 * Wo + 2 columns of its padded input.
func.func @window3_columns(%x: memref<1x1x10x9xf32>, %y: memref<1x1x4x4xf32>, %w: memref<3x3xf32>) {
  // expected-error @below {{must pool [1, 1, 10, 9] into its 3x3 windows of stride 2, with 2 * Wo + 2 columns ([1, 1, 4, 4] is not that shape)}}
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<1x1x10x9xf32>, memref<3x3xf32>) outs(%y : memref<1x1x4x4xf32>)
  return
}

// -----

func.func @stride(%x: memref<1x1x8x8xf32>, %y: memref<1x1x7x7xf32>, %w: memref<2x2xf32>) {
  // expected-error @below {{a gradir.kernel max pool must have strides 2 and no dilation}}
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x1x8x8xf32>, memref<2x2xf32>) outs(%y : memref<1x1x7x7xf32>)
  return
}

// -----

func.func @ints(%x: memref<1x1x8x8xi32>, %y: memref<1x1x4x4xi32>, %w: memref<2x2xi32>) {
  // expected-error @below {{a gradir.kernel max pool must have one element type, one of f32, f64}}
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<1x1x8x8xi32>, memref<2x2xi32>) outs(%y : memref<1x1x4x4xi32>)
  return
}

// -----

func.func @shape(%x: memref<1x1x8x8xf32>, %y: memref<1x1x3x4xf32>, %w: memref<2x2xf32>) {
  // expected-error @below {{a gradir.kernel max pool must pool [1, 1, 8, 8] into its 2x2 windows ([1, 1, 3, 4] is not that shape)}}
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<1x1x8x8xf32>, memref<2x2xf32>) outs(%y : memref<1x1x3x4xf32>)
  return
}

// -----

func.func @on_tensors(%x: tensor<1x1x8x8xf32>, %y: tensor<1x1x4x4xf32>, %w: tensor<2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @below {{a gradir.kernel max pool must have an input, a window and an output, on buffers}}
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x1x8x8xf32>, tensor<2x2xf32>) outs(%y : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x00 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
#x01 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2 + 1)>
#x10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2)>
#x11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @unknown_kernel(%dy: memref<1x1x2x2xf32>, %x: memref<1x1x4x4xf32>, %dx: memref<1x1x4x4xf32>) {
  // expected-error @below {{unknown gradir.kernel "min_pool2x2_backward" (expected one of "max_pool2x2_backward", "avg_pool2x2_backward", "max_pool3x3s2_backward")}}
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<1x1x2x2xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>) outs(%dx : memref<1x1x4x4xf32>) attrs = {gradir.kernel = "min_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x00 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
#x01 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2 + 1)>
#x10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2)>
#x11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @two_inputs(%dy: memref<1x1x2x2xf32>, %x: memref<1x1x4x4xf32>, %x2: memref<1x1x4x4xf32>, %dx: memref<1x1x4x4xf32>) {
  // expected-error @below {{a gradir.kernel max-pool backward must read the same input four times}}
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x2, %x, %x : memref<1x1x2x2xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>) outs(%dx : memref<1x1x4x4xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x00 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2)>
#x01 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2, (d3 floordiv 2) * 2 + 1)>
#x10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2)>
#x11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2) * 2 + 1, (d3 floordiv 2) * 2 + 1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @odd(%dy: memref<1x1x3x3xf32>, %x: memref<1x1x4x4xf32>, %dx: memref<1x1x4x4xf32>) {
  // expected-error @below {{a gradir.kernel max-pool backward must have an output twice the gradient's size ([1, 1, 4, 4] for [1, 1, 3, 3])}}
  linalg.generic {indexing_maps = [#g, #x00, #x01, #x10, #x11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<1x1x3x3xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>) outs(%dx : memref<1x1x4x4xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @maps(%dy: memref<1x1x2x2xf32>, %x: memref<1x1x4x4xf32>, %dx: memref<1x1x4x4xf32>) {
  // expected-error @below {{a gradir.kernel max-pool backward must read each window through its indexing maps}}
  linalg.generic {indexing_maps = [#g, #x, #x, #x, #x, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x, %x, %x, %x : memref<1x1x2x2xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>) outs(%dx : memref<1x1x4x4xf32>) attrs = {gradir.kernel = "max_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %b1: f32, %b2: f32, %b3: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#g = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @avg_with_input(%dy: memref<1x1x2x2xf32>, %x: memref<1x1x4x4xf32>, %dx: memref<1x1x4x4xf32>) {
  // expected-error @below {{a gradir.kernel average-pool backward must read the gradient, and write one buffer}}
  linalg.generic {indexing_maps = [#g, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy, %x : memref<1x1x2x2xf32>, memref<1x1x4x4xf32>) outs(%dx : memref<1x1x4x4xf32>) attrs = {gradir.kernel = "avg_pool2x2_backward"} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
