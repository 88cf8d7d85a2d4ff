// RUN: gradir-opt %s --split-input-file --verify-diagnostics --gpu-linalg-to-kernels
// RUN: not gradir-opt %s --gpu-linalg-to-kernels='chip=sm_75 compute-dtype=bf16' 2>&1 | FileCheck %s --check-prefix=NOBF16
// RUN: not gradir-opt %s --gpu-linalg-to-kernels='chip=sm_86 precision=medium' 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not gradir-opt %s --gpu-linalg-to-kernels='chip=sm_75 precision=high' 2>&1 | FileCheck %s --check-prefix=NOTF32
// Refusals of gpu-linalg-to-kernels.

// Tensor-core options on a chip without them (TF32 asked for by its alias
// "high" too); a precision PyTorch names but gradir does not take.
// NOBF16: error: option 'compute-dtype' of pass 'gpu-linalg-to-kernels': compute_dtype 'bf16' runs contractions on bf16 tensor cores, which need chip sm_80 or later, not sm_75
// PRECISION: error: option 'precision' of pass 'gpu-linalg-to-kernels' must be one of fp32, highest, tf32, high, got 'medium'
// NOTF32: error: option 'precision' of pass 'gpu-linalg-to-kernels': precision 'tf32' runs f32 contractions on TF32 tensor cores, which need chip sm_80 or later, not sm_75

func.func @named(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{'linalg.matmul' must be generalized first (run linalg-generalize-named-ops)}}
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

func.func @tensors(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{linalg on tensors: bufferize before gpu-linalg-to-kernels}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dynamic(%a: memref<?xf32>, %b: memref<?xf32>) {
  // expected-error @+1 {{dynamic shape memref<?xf32> is not supported}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]} ins(%a : memref<?xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}
