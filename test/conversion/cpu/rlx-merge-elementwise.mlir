// RUN: gradir-opt %s --split-input-file --allow-unregistered-dialect --rlx-merge-elementwise | FileCheck %s
// An elementwise generic that other ops read too (so elementwise fusion left
// it apart) is computed in its elementwise consumer's loop, as an extra
// result the other readers take; a chain (batch norm's x - mean, its
// output, relu) becomes one loop yielding every kept value.

// CHECK-DAG:   #[[$ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[$CH:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8x16x16xf32>, %[[M:.*]]: tensor<1x8x1x1xf32>, %[[S:.*]]: tensor<1x8x1x1xf32>)
// CHECK:         %[[R:.*]]:3 = linalg.generic {indexing_maps = [#[[$ID]], #[[$CH]], #[[$CH]], #[[$ID]], #[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]], %[[M]], %[[S]] : tensor<4x8x16x16xf32>, tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[D]], %[[C]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.maximumf %[[Y]], %{{.*}} : f32
// CHECK-NEXT:      linalg.yield %[[D]], %[[Y]], %[[Z]] : f32, f32, f32
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
func.func @chain(%x: tensor<4x8x16x16xf32>, %m: tensor<1x8x1x1xf32>, %s: tensor<1x8x1x1xf32>)
    -> (tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x16x16xf32>
  %xc = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<4x8x16x16xf32>, tensor<1x8x1x1xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x8x16x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xc, %s : tensor<4x8x16x16xf32>, tensor<1x8x1x1xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x8x16x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<4x8x16x16xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.maximumf %a, %zero : f32
    linalg.yield %q : f32
  } -> tensor<4x8x16x16xf32>
  return %xc, %y, %r : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>
}

// -----

// A consumer reading the producer twice and another operand; the producer's
// other reader (after the consumer) takes the merged op's first result.
// CHECK-LABEL: func.func @twice(
// CHECK-SAME:      %[[X:.*]]: tensor<64xf32>, %[[W:.*]]: tensor<64xf32>)
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<64xf32>, tensor<64xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[E]], %[[E]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.addf %[[P]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[E]], %[[Q]] : f32, f32
// CHECK:         %[[T:.*]] = "test.use"(%[[R]]#0)
// CHECK:         return %[[R]]#1, %[[T]]
#v = affine_map<(d0) -> (d0)>
func.func @twice(%x: tensor<64xf32>, %w: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %ex = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
      ins(%ex, %ex, %w : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %d: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %p, %d : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  %t = "test.use"(%ex) : (tensor<64xf32>) -> tensor<64xf32>
  return %c, %t : tensor<64xf32>, tensor<64xf32>
}

// -----

// Left apart: another reader before the consumer (the merged op, at the
// consumer's place, would not dominate it); a producer read by its consumer
// alone (elementwise fusion's case); a producer read through a transposing
// map; loops of another shape; a producer marked grad.recomputed; a
// consumer writing into the producer's result.
// CHECK-LABEL: func.func @reader_before(
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @one_reader(
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @transposed(
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @broadcast_loops(
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @recomputed(
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @into_producer(
// CHECK-COUNT-2: linalg.generic
#v = affine_map<(d0) -> (d0)>
#m = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#r = affine_map<(d0, d1) -> (d1)>
func.func @reader_before(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %ex = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %t = "test.use"(%ex) : (tensor<64xf32>) -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%ex : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  return %c, %t : tensor<64xf32>, tensor<64xf32>
}
func.func @one_reader(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %ex = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%ex : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  return %c : tensor<64xf32>
}
func.func @transposed(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %ex = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  %c = linalg.generic {indexing_maps = [#t, #m], iterator_types = ["parallel", "parallel"]}
      ins(%ex : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    linalg.yield %p : f32
  } -> tensor<8x8xf32>
  %t = "test.use"(%ex) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c, %t : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func @broadcast_loops(%x: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %ex = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#r, #m], iterator_types = ["parallel", "parallel"]}
      ins(%ex : tensor<8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    linalg.yield %p : f32
  } -> tensor<8x8xf32>
  %t = "test.use"(%ex) : (tensor<8xf32>) -> tensor<8xf32>
  return %c, %t : tensor<8x8xf32>, tensor<8xf32>
}
func.func @recomputed(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %ex = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) attrs = {grad.recomputed} {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%ex : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  %t = "test.use"(%ex) : (tensor<64xf32>) -> tensor<64xf32>
  return %c, %t : tensor<64xf32>, tensor<64xf32>
}
func.func @into_producer(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %ex = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%ex, %x : tensor<64xf32>, tensor<64xf32>) outs(%ex : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  %t = "test.use"(%ex) : (tensor<64xf32>) -> tensor<64xf32>
  return %c, %t : tensor<64xf32>, tensor<64xf32>
}
