// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-conv-kernels
// RUN: not gradir-opt %s --split-input-file --rlx-conv-kernels=cpu=pentium 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: rlx-conv-kernels: unknown cpu 'pentium'
// RUN: not gradir-opt %s --split-input-file --rlx-conv-kernels=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: option 'threads' of pass 'rlx-conv-kernels' must be at least 1, got 0

// A marked convolution the kernel does not take is refused at the op.
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @geometry(%w: memref<8x27xf32>, %x: memref<2x3x10x10xf32>, %s: memref<3x3x3xf32>, %y: memref<2x8x8x8xf32>) {
  // expected-error @below {{a gradir.conv_kernel generic's attribute must be array<i64: kh, kw, sh, sw, dh, dw>, all positive}}
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<2x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 0, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @element_type(%w: memref<8x27xf16>, %x: memref<2x3x10x10xf16>, %s: memref<3x3x3xf16>, %y: memref<2x8x8x8xf16>) {
  // expected-error @below {{a gradir.conv_kernel generic must have one element type, one of f32, f64}}
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf16>, memref<2x3x10x10xf16>, memref<3x3x3xf16>) outs(%y : memref<2x8x8x8xf16>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f16, %b: f16, %c: f16, %o: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %o, %m : f16
    linalg.yield %r : f16
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2, d3)>
func.func @wgrad_geometry(%w: memref<8x27xf32>, %x: memref<2x3x10x10xf32>, %s: memref<3x3x3xf32>, %y: memref<8x2x8x8xf32>) {
  // expected-error @below {{a gradir.wgrad_conv_kernel generic's attribute must be array<i64: kh, kw, sh, sw, dh, dw>, all positive}}
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<2x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<8x2x8x8xf32>) attrs = {gradir.wgrad_conv_kernel = array<i64: 3, 3, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2, d3)>
func.func @both(%w: memref<8x27xf32>, %x: memref<2x3x10x10xf32>, %s: memref<3x3x3xf32>, %y: memref<8x2x8x8xf32>) {
  // expected-error @below {{a gradir.wgrad_conv_kernel generic must not be marked gradir.conv_kernel as well}}
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<2x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<8x2x8x8xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>, gradir.wgrad_conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, (d4 * 3 + d5) * 3 + d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d2 + d5, d3 + d6)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @images_map(%w: memref<8x27xf32>, %x: memref<8x3x10x10xf32>, %s: memref<3x3x3xf32>, %y: memref<2x8x8x8xf32>) {
  // expected-error @below {{a gradir.conv_kernel generic must read its images at (d0, d4, ...) or, swapped, (d4, d0, ...)}}
  linalg.generic {indexing_maps = [#w, #x, #s, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x, %s : memref<8x27xf32>, memref<8x3x10x10xf32>, memref<3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) attrs = {gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  return
}
