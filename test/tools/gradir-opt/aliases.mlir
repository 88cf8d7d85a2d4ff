// Several top-level ops after attribute aliases: the implicit module goes
// after the aliases, and locations stay those of the file.
// RUN: gradir-opt %s | FileCheck %s
// RUN: not gradir-opt %s --rlx-to-linalg --no-rlx-verify --pass-pipeline='builtin.module(func.func(bogus-pass))' 2>&1 | FileCheck %s --check-prefix=ERR
#map = affine_map<(d0) -> (d0)>
func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @b() {
  return
}
// CHECK: #map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @a(
// CHECK: linalg.generic {indexing_maps = [#map, #map]
// CHECK-LABEL: func.func @b(
// ERR: error: '--pass-pipeline' cannot be used with individual pass options
