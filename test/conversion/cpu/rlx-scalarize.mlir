// RUN: gradir-opt %s --split-input-file --rlx-scalarize --canonicalize | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-scalarize=max-elements=8 --canonicalize | FileCheck %s --check-prefix=BIG

// Loop-carried 0-d and 2-element tensors become scalars; the reduction is
// unrolled in the loops' order (element 0 first, accumulating into the init).
// CHECK-LABEL: func.func @sum_loop
// CHECK: %[[X0:.*]] = tensor.extract %arg0[%c0] : tensor<2xf64>
// CHECK: %[[X1:.*]] = tensor.extract %arg0[%c1] : tensor<2xf64>
// CHECK: scf.for {{.*}} iter_args(%[[A:.*]] = %[[X0]], %[[B:.*]] = %[[X1]], %[[S:.*]] = %{{.*}}) -> (f64, f64, f64)
// CHECK-NOT: tensor
// CHECK: %[[M0:.*]] = arith.mulf %[[A]], %[[A]] : f64
// CHECK: %[[R0:.*]] = arith.addf %[[M0]], %{{.*}} : f64
// CHECK: %[[M1:.*]] = arith.mulf %[[B]], %[[B]] : f64
// CHECK: %[[R1:.*]] = arith.addf %[[M1]], %[[R0]] : f64
// CHECK: %[[T:.*]] = arith.addf %[[S]], %[[R1]] : f64
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[T]] : f64, f64, f64
// CHECK: tensor.from_elements %{{.*}}#0, %{{.*}}#1 : tensor<2xf64>
// CHECK: tensor.from_elements %{{.*}}#2 : tensor<f64>
#id = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
#sc = affine_map<() -> ()>
func.func @sum_loop(%x0: tensor<2xf64>, %n: index) -> (tensor<2xf64>, tensor<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %x0, %acc = %init) -> (tensor<2xf64>, tensor<f64>) {
    %s = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction"]}
        ins(%x : tensor<2xf64>) outs(%init : tensor<f64>) {
    ^bb0(%in: f64, %out: f64):
      %m = arith.mulf %in, %in : f64
      %a = arith.addf %m, %out : f64
      linalg.yield %a : f64
    } -> tensor<f64>
    %acc2 = linalg.generic {indexing_maps = [#sc, #sc, #sc], iterator_types = []}
        ins(%acc, %s : tensor<f64>, tensor<f64>) outs(%e : tensor<f64>) {
    ^bb0(%a: f64, %b: f64, %out: f64):
      %t = arith.addf %a, %b : f64
      linalg.yield %t : f64
    } -> tensor<f64>
    %e2 = tensor.empty() : tensor<2xf64>
    %half = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<2xf64>) outs(%e2 : tensor<2xf64>) {
    ^bb0(%in: f64, %out: f64):
      %c = arith.constant 0.5 : f64
      %h = arith.mulf %in, %c : f64
      linalg.yield %h : f64
    } -> tensor<2xf64>
    scf.yield %half, %acc2 : tensor<2xf64>, tensor<f64>
  }
  return %r#0, %r#1 : tensor<2xf64>, tensor<f64>
}

// -----

// scf.while, scf.if and arith.select on tiny tensors: all scalars.
// CHECK-LABEL: func.func @while_if
// CHECK: scf.while ({{.*}}) : (f64, f64, f64) -> (f64, f64, f64)
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %{{.*}}, %{{.*}} : f64, f64, f64
// CHECK: scf.if %{{.*}} -> (f64, f64)
// CHECK: arith.select %{{.*}}, %{{.*}}#0, %{{.*}} : f64
// CHECK: arith.select %{{.*}}, %{{.*}}#1, %{{.*}} : f64
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : f64, f64, f64
// CHECK: %[[R:.*]] = tensor.from_elements %{{.*}}#0, %{{.*}}#1 : tensor<2xf64>
// CHECK: return %[[R]]
func.func @while_if(%x0: tensor<2xf64>, %lim: tensor<f64>) -> tensor<2xf64> {
  %r:2 = scf.while (%x = %x0, %n = %lim) : (tensor<2xf64>, tensor<f64>) -> (tensor<2xf64>, tensor<f64>) {
    %v = tensor.extract %n[] : tensor<f64>
    %z = arith.constant 0.0 : f64
    %go = arith.cmpf ogt, %v, %z : f64
    scf.condition(%go) %x, %n : tensor<2xf64>, tensor<f64>
  } do {
  ^bb0(%x: tensor<2xf64>, %n: tensor<f64>):
    %v = tensor.extract %n[] : tensor<f64>
    %one = arith.constant 1.0 : f64
    %m = arith.subf %v, %one : f64
    %n2 = tensor.from_elements %m : tensor<f64>
    %big = arith.cmpf ogt, %v, %one : f64
    %y = scf.if %big -> tensor<2xf64> {
      %e = tensor.empty() : tensor<2xf64>
      %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
          ins(%x : tensor<2xf64>) outs(%e : tensor<2xf64>) {
      ^bb0(%in: f64, %out: f64):
        %t = arith.addf %in, %in : f64
        linalg.yield %t : f64
      } -> tensor<2xf64>
      scf.yield %d : tensor<2xf64>
    } else {
      scf.yield %x : tensor<2xf64>
    }
    %w = arith.select %big, %y, %x : tensor<2xf64>
    scf.yield %w, %n2 : tensor<2xf64>, tensor<f64>
  }
  return %r#0 : tensor<2xf64>
}

// -----

// A tiny tensor into a loop's tape: one tensor.insert per element (stores in
// place); a tiny slice of it: loads.
// CHECK-LABEL: func.func @tape
// CHECK: %[[E0:.*]] = tensor.extract %arg1[%c0] : tensor<2xf64>
// CHECK: %[[E1:.*]] = tensor.extract %arg1[%c1] : tensor<2xf64>
// CHECK: %[[I0:.*]] = tensor.insert %[[E0]] into %arg0[%arg2, %c0] : tensor<?x2xf64>
// CHECK: %[[I1:.*]] = tensor.insert %[[E1]] into %[[I0]][%arg2, %c1] : tensor<?x2xf64>
// CHECK: %[[L0:.*]] = tensor.extract %arg0[%c0, %c0] : tensor<?x2xf64>
// CHECK: %[[L1:.*]] = tensor.extract %arg0[%c0, %c1] : tensor<?x2xf64>
// CHECK: %[[S:.*]] = tensor.from_elements %[[L0]], %[[L1]] : tensor<2xf64>
// CHECK: return %[[I1]], %[[S]]
func.func @tape(%t0: tensor<?x2xf64>, %x: tensor<2xf64>, %i: index) -> (tensor<?x2xf64>, tensor<2xf64>) {
  %t = tensor.insert_slice %x into %t0[%i, 0] [1, 2] [1, 1] : tensor<2xf64> into tensor<?x2xf64>
  %j = arith.constant 0 : index
  %s = tensor.extract_slice %t0[%j, 0] [1, 2] [1, 1] : tensor<?x2xf64> to tensor<2xf64>
  return %t, %s : tensor<?x2xf64>, tensor<2xf64>
}

// -----

// More than max-elements (default 4): left alone.
// CHECK-LABEL: func.func @big
// CHECK: linalg.generic
// BIG-LABEL: func.func @big
// BIG-NOT: linalg.generic
// BIG-COUNT-8: arith.addf
// BIG: tensor.from_elements {{.*}} : tensor<8xf64>
func.func @big(%x: tensor<8xf64>) -> tensor<8xf64> {
  %e = tensor.empty() : tensor<8xf64>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%in: f64, %out: f64):
    %t = arith.addf %in, %in : f64
    linalg.yield %t : f64
  } -> tensor<8xf64>
  return %d : tensor<8xf64>
}
