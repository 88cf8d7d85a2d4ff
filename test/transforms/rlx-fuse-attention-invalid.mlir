// Bad options are pipeline errors located in the pipeline text, one RUN line each.
// RUN: not gradir-opt %s --rlx-fuse-attention='cache-bytes=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not gradir-opt %s --rlx-fuse-attention='cache-bytes=-4096' 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not gradir-opt %s --rlx-fuse-attention='cache-bytes=512KiB' 2>&1 | FileCheck %s --check-prefix=UNIT
// RUN: not gradir-opt %s --rlx-fuse-attention='block-rows=16' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(func.func(rlx-fuse-attention{cache-bytes=0}))' 2>&1 | FileCheck %s --check-prefix=NESTED

// ZERO: <pass-pipeline>:1:{{[0-9]+}}: error: option 'cache-bytes' of pass 'rlx-fuse-attention' must be a positive number of bytes, got 0
// NEG: <pass-pipeline>:1:{{[0-9]+}}: error: option 'cache-bytes' of pass 'rlx-fuse-attention' must be a positive number of bytes, got -4096
// UNIT: <pass-pipeline>:1:{{[0-9]+}}: error: option 'cache-bytes' of pass 'rlx-fuse-attention' expects int, got '512KiB'
// UNKNOWN: <pass-pipeline>:1:{{[0-9]+}}: error: no such option 'block-rows' for pass 'rlx-fuse-attention' (options: cache-bytes)
// NESTED: <pass-pipeline>:1:{{[0-9]+}}: error: option 'cache-bytes' of pass 'rlx-fuse-attention' must be a positive number of bytes, got 0
func.func @main(%q: tensor<64x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %s = "rlx.matmul"(%q, %kt) : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %p = "rlx.softmax"(%s) {axis = array<i64: -1>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %o = "rlx.matmul"(%p, %v) : (tensor<64x64xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
  return %o : tensor<64x16xf32>
}
