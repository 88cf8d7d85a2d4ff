// RUN: gradir-opt %s --split-input-file --verify-diagnostics --gpu-device-buffers
// Refusals of gpu-device-buffers.

func.func private @callee(%x: memref<2xf32>)
func.func @caller(%x: memref<2xf32>) {
  // expected-error @+1 {{calls are not supported on the GPU path (inline them first)}}
  func.call @callee(%x) : (memref<2xf32>) -> ()
  return
}

// -----

// expected-error @+1 {{gpu-device-buffers expects functions with a single block}}
func.func @blocks(%x: memref<2xf32>) {
  cf.br ^bb1
^bb1:
  return
}
