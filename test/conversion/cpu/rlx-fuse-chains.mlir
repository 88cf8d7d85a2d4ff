// RUN: gradir-opt %s --split-input-file --rlx-fuse-chains | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-fuse-chains --linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=BOTH
// RUN: gradir-opt %s --split-input-file --linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=BOTH
// Trees of single-use elementwise generics become one generic, their ops
// moved in the order upstream's elementwise fusion leaves them (the BOTH
// lines: upstream's pass after this one gives what it gives alone).

// A chain: one generic, the ops in program order.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      %[[X:.*]]: tensor<8xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = math.sin %[[A]] : f32
// CHECK-NEXT:      %[[C:.*]] = math.cos %[[S]] : f32
// CHECK-NEXT:      %[[P:.*]] = math.exp %[[C]] : f32
// CHECK-NEXT:      linalg.yield %[[P]] : f32
// CHECK:         return %[[R]]
// BOTH-LABEL:  func.func @chain(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// BOTH-NEXT:       %[[S:.*]] = math.sin %[[A]] : f32
// BOTH-NEXT:       %[[C:.*]] = math.cos %[[S]] : f32
// BOTH-NEXT:       %[[P:.*]] = math.exp %[[C]] : f32
// BOTH-NEXT:       linalg.yield %[[P]] : f32
// BOTH-NOT:      linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %c : tensor<8xf32>
}

// -----

// A tree: two producers into one consumer.  Upstream fuses the consumer's
// first operand's producer, then its second, each before the body: the
// second producer's ops come first; the inputs in operand order (a splat
// constant read becomes a scalar constant).
// CHECK-LABEL: func.func @tree(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK:         %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$ROW:.*]], #{{.*}}, #{{.*}}], {{.*}} ins(%[[X]], %[[B]], %[[Y]] : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IX:.*]]: f32, %[[IB:.*]]: f32, %[[IY:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[C:.*]] = math.cos %[[IY]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[IX]], %[[IB]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[S]], %[[C]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.mulf %[[M]], %[[TWO]] : f32
// CHECK-NEXT:      linalg.yield %[[T]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
// BOTH-LABEL:  func.func @tree(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0(%[[IX:.*]]: f32, %[[IB:.*]]: f32, %[[IY:.*]]: f32, %{{.*}}: f32):
// BOTH-NEXT:       %[[C:.*]] = math.cos %[[IY]] : f32
// BOTH-NEXT:       %[[S:.*]] = arith.addf %[[IX]], %[[IB]] : f32
// BOTH-NEXT:       %[[M:.*]] = arith.mulf %[[S]], %[[C]] : f32
// BOTH-NEXT:       %[[T:.*]] = arith.mulf %[[M]], %{{.*}} : f32
// BOTH-NEXT:       linalg.yield %[[T]] : f32
// BOTH-NEXT:     } -> tensor<4x8xf32>
// BOTH-NEXT:     return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @tree(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %two = arith.constant dense<2.0> : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %o: f32):
    %s = arith.addf %in, %in1 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %q, %two : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %in2: f32, %o: f32):
    %m = arith.mulf %in, %in1 : f32
    %t = arith.mulf %m, %in2 : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A fill read as an input: its scalar in the body, the input dropped (as
// upstream's FoldFillWithGenericOp, which on one fused op with many such
// inputs would drop them one at a time).
// CHECK-LABEL: func.func @fill(
// CHECK-SAME:      %[[X:.*]]: tensor<8xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = math.sin %[[A]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[S]], %[[ZERO]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NOT:     linalg.fill
// BOTH-LABEL:  func.func @fill(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// BOTH-NEXT:       %[[S:.*]] = math.sin %[[A]] : f32
// BOTH-NEXT:       %[[M:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// BOTH-NEXT:       linalg.yield %[[M]] : f32
#id = affine_map<(d0) -> (d0)>
func.func @fill(%x: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %z : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %in1: f32, %o: f32):
    %m = arith.maximumf %in, %in1 : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

// Left alone: a producer read twice (by two ops), a reduction (its
// elementwise producer is left to upstream: one step), a dynamic shape.
// CHECK-LABEL: func.func @multi_use(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @reduction(
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @dynamic(
// CHECK-COUNT-2: linalg.generic
#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @multi_use(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %b, %c : tensor<8xf32>, tensor<8xf32>
}
func.func @reduction(%x: tensor<8xf32>, %init: tensor<f32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction"]}
      ins(%a : tensor<8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func @dynamic(%x: tensor<?xf32>, %e: tensor<?xf32>) -> tensor<?xf32> {
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %b : tensor<?xf32>
}

// -----

// A producer carrying a discardable attribute (grad.recomputed), one reading
// its loop indices and one read through a broadcast stay apart (upstream
// fuses them first, before the rest of their consumer's body: the chain
// after them is fused here).
// CHECK-LABEL: func.func @marked(
// CHECK:         linalg.generic {{.*}} {grad.recomputed}
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      math.cos %[[A]]
// CHECK-NEXT:      math.exp
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @indices(
// CHECK:         linalg.index
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.cos
// CHECK-NEXT:      math.exp
// CHECK-LABEL: func.func @broadcast(
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[P]] : tensor<8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      math.cos %[[A]]
// CHECK-NEXT:      math.exp
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     linalg.generic
// BOTH-LABEL:  func.func @marked(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0
// BOTH-NEXT:       math.sin
// BOTH-NEXT:       math.tanh
// BOTH-NEXT:       math.cos
// BOTH-NEXT:       math.exp
// BOTH-NOT:      linalg.generic
// BOTH-LABEL:  func.func @indices(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0
// BOTH-NEXT:       linalg.index
// BOTH:            math.cos
// BOTH-NEXT:       math.exp
// BOTH-NOT:      linalg.generic
// BOTH-LABEL:  func.func @broadcast(
// BOTH:          linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// BOTH-NEXT:     ^bb0
// BOTH-NEXT:       math.sin
// BOTH-NEXT:       math.cos
// BOTH-NEXT:       math.exp
// BOTH-NOT:      linalg.generic
#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @marked(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {grad.recomputed} {
  ^bb0(%in: f32, %o: f32):
    %s = math.tanh %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%c : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %d : tensor<8xf32>
}
func.func @indices(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%c : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %d : tensor<8xf32>
}
func.func @broadcast(%x: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// Where the producer left to upstream would not come first in the body
// (it is the consumer's first fusable operand, another producer's ops come
// before it), the consumer stays as it is; in the other order the other
// producer is fused and the marked one left as an input.
// CHECK-LABEL: func.func @not_first(
// CHECK-COUNT-3: linalg.generic
// CHECK-LABEL: func.func @first(
// CHECK:         %[[M:.*]] = linalg.generic {{.*}} {grad.recomputed}
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[M]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.cos
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      linalg.yield
// BOTH-LABEL:  func.func @not_first(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0
// BOTH-NEXT:       math.cos
// BOTH-NEXT:       math.sin
// BOTH-NEXT:       arith.addf
// BOTH-LABEL:  func.func @first(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0
// BOTH-NEXT:       math.sin
// BOTH-NEXT:       math.cos
// BOTH-NEXT:       arith.addf
#id = affine_map<(d0) -> (d0)>
func.func @not_first(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {grad.recomputed} {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %p : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %in1: f32, %o: f32):
    %s = arith.addf %in, %in1 : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func @first(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {grad.recomputed} {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %m : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %in1: f32, %o: f32):
    %s = arith.addf %in, %in1 : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A value read only by a tree's ops (a diamond): upstream fuses it once it
// merges the duplicate inputs, where the reads meet, before the body
// there; so here (its tree: the op making %v).  A marked one (left to
// upstream) cuts the tree where the reads meet.
// CHECK-LABEL: func.func @diamond_at_root(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.tanh
// CHECK-NEXT:      math.cos
// CHECK-NEXT:      math.sin
// CHECK-NEXT:      arith.addf
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @diamond_below(
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.tanh
// CHECK-NEXT:      math.cos
// CHECK-NEXT:      math.sin
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      math.exp
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @diamond_marked(
// CHECK:         %[[V:.*]] = linalg.generic {{.*}} {grad.recomputed}
// CHECK:         %[[D:.*]] = linalg.generic {{.*}} ins(%[[V]], %[[V]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.cos
// CHECK-NEXT:      math.sin
// CHECK-NEXT:      arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[D]] : tensor<8xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.exp
// BOTH-LABEL:  func.func @diamond_at_root(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0
// BOTH-NEXT:       math.tanh
// BOTH-NEXT:       math.cos
// BOTH-NEXT:       math.sin
// BOTH-NEXT:       arith.addf
// BOTH-NOT:      linalg.generic
// BOTH-LABEL:  func.func @diamond_below(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0
// BOTH-NEXT:       math.tanh
// BOTH-NEXT:       math.cos
// BOTH-NEXT:       math.sin
// BOTH-NEXT:       arith.addf
// BOTH-NEXT:       math.exp
// BOTH-NOT:      linalg.generic
// BOTH-LABEL:  func.func @diamond_marked(
// BOTH:          linalg.generic
// BOTH-NEXT:     ^bb0
// BOTH-NEXT:       math.tanh
// BOTH-NEXT:       math.cos
// BOTH-NEXT:       math.sin
// BOTH-NEXT:       arith.addf
// BOTH-NEXT:       math.exp
// BOTH-NOT:      linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @diamond_at_root(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.tanh %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %in1: f32, %o: f32):
    %s = arith.addf %in, %in1 : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func @diamond_below(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.tanh %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %in1: f32, %o: f32):
    %s = arith.addf %in, %in1 : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%r : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %d : tensor<8xf32>
}
func.func @diamond_marked(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {grad.recomputed} {
  ^bb0(%in: f32, %o: f32):
    %s = math.tanh %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.cos %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %in1: f32, %o: f32):
    %s = arith.addf %in, %in1 : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%r : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %d : tensor<8xf32>
}
