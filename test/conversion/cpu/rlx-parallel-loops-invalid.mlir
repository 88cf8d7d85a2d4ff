// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-parallel-loops='threads=2'
// RUN: not gradir-opt %s --rlx-parallel-loops='threads=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not gradir-opt %s --rlx-parallel-loops='threads=-3' 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not gradir-opt %s --rlx-parallel-loops='min-work=-1' 2>&1 | FileCheck %s --check-prefix=WORK
// ZERO: <pass-pipeline>:1:16: error: option 'threads' of pass 'rlx-parallel-loops' must be at least 1, got 0
// NEG: <pass-pipeline>:1:16: error: option 'threads' of pass 'rlx-parallel-loops' must be at least 1, got -3
// WORK: <pass-pipeline>:1:16: error: option 'min-work' of pass 'rlx-parallel-loops' must not be negative, got -1
// RUN: not gradir-opt %s --rlx-parallel-loops='hot-min-work=-2' 2>&1 | FileCheck %s --check-prefix=HOT
// HOT: <pass-pipeline>:1:16: error: option 'hot-min-work' of pass 'rlx-parallel-loops' must be -1 or more, got -2

// A parallel loop with reductions would combine its partial results in an
// order OpenMP leaves open; the CPU pipeline never creates one, and the pass
// refuses it rather than give results that change from run to run.
func.func @reduction(%a: memref<4096xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{rlx-parallel-loops: scf.parallel with reductions is not supported}}
  %s = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<4096xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      scf.reduce.return %t : f32
    }
  }
  return %s : f32
}

// -----

// The operation count on a kernel call must be an integer.
func.func private @work(index)
func.func @float_work(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @+1 {{rlx-parallel-loops: 'gradir.work' must be an integer attribute (the op's operation count)}}
    func.call @work(%i) {gradir.work = 9.2e18} : (index) -> ()
    scf.reduce
  }
  return
}
