// RUN: gradir-opt %s --split-input-file --rlx-parallel-loops='threads=2' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-parallel-loops='threads=1' | FileCheck %s --check-prefix=ONE
// RUN: gradir-opt %s --split-input-file --rlx-parallel-loops='threads=3 min-work=0' | FileCheck %s --check-prefix=ALL
// RUN: gradir-opt %s --split-input-file --rlx-parallel-loops='threads=2' | gradir-opt --split-input-file --rlx-parallel-loops='threads=2' | FileCheck %s --check-prefix=AGAIN
// RUN: gradir-opt %s --split-input-file --rlx-parallel-loops='threads=2 min-work=5000 hot-min-work=3000' | FileCheck %s --check-prefix=HOT

// A loop nest with enough work runs its first dimension on the threads
// (an OpenMP work-sharing loop, guided schedule); the other dimensions
// become scf.for loops inside, in their order.  threads=1 makes every
// scf.parallel sequential.

// CHECK-LABEL: func.func @big(
// CHECK: %[[N:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: omp.parallel num_threads(%[[N]] : i32) {
// CHECK-NEXT: omp.wsloop schedule(guided) {
// CHECK-NEXT: omp.loop_nest (%[[I:.*]]) : index = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT: math.exp
// CHECK-NEXT: memref.store %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT: }
// CHECK-NEXT: omp.yield
// CHECK-NOT: memref.alloca_scope
// CHECK-NOT: scf.parallel

// ONE-LABEL: func.func @big(
// ONE-NOT: omp.
// ONE: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// ONE-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// ONE-NEXT: memref.load %{{.*}}[%[[I]], %[[J]]]
// ONE-NOT: scf.parallel
// ONE-NOT: omp.

// ALL-LABEL: func.func @big(
// ALL: %[[N:.*]] = llvm.mlir.constant(3 : i32) : i32
// ALL: omp.parallel num_threads(%[[N]] : i32) {

// Running the pass again changes nothing (no scf.parallel is left).
// AGAIN-LABEL: func.func @big(
// AGAIN: omp.parallel
// AGAIN-NOT: omp.parallel
func.func @big(%a: memref<64x1024xf32>, %b: memref<64x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c1024) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<64x1024xf32>
    %y = math.exp %x : f32
    memref.store %y, %b[%i, %j] : memref<64x1024xf32>
    scf.reduce
  }
  return
}

// -----

// Too little work (4 x 8 element operations): sequential loops, unless
// min-work is lowered.

// CHECK-LABEL: func.func @small(
// CHECK-NOT: omp.
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NOT: omp.

// AGAIN-LABEL: func.func @small(

// ALL-LABEL: func.func @small(
// ALL: omp.parallel
// ALL: omp.loop_nest
// ALL-NEXT: scf.for
func.func @small(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// Only the outermost parallel loop runs on the threads; one nested in it
// (the scheduled matmul's strips contain such loops) becomes scf.for.  A
// leading dimension of one iteration is skipped: the next one runs on the
// threads (a convolution's weight gradient over one input channel); a nest
// whose dimensions all have one iteration stays sequential.

// CHECK-LABEL: func.func @nested(
// CHECK: omp.loop_nest (%[[I:.*]]) : index
// CHECK-NEXT: memref.load %{{.*}}[%[[I]]]
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: memref.store %{{.*}}[%[[I]], %[[J]]]
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func @one_trip(
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: omp.parallel
// CHECK: omp.loop_nest (%[[J:.*]]) : index = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: memref.store %{{.*}}[%[[I]], %[[J]]]
// CHECK-LABEL: func.func @all_one(
// CHECK-NOT: omp.
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NOT: omp.
func.func @nested(%a: memref<512xf32>, %b: memref<512x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
    %x = memref.load %a[%i] : memref<512xf32>
    scf.parallel (%j) = (%c0) to (%c512) step (%c1) {
      memref.store %x, %b[%i, %j] : memref<512x512xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
func.func @one_trip(%a: memref<1x262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c262144 = arith.constant 262144 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c262144) step (%c1, %c1) {
    memref.store %f, %a[%i, %j] : memref<1x262144xf32>
    scf.reduce
  }
  return
}
func.func @all_one(%a: memref<1x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c1) step (%c1, %c1) {
    memref.store %f, %a[%i, %j] : memref<1x1xf32>
    scf.reduce
  }
  return
}

// -----

// A body allocating on the stack keeps the per-iteration scope that
// convert-scf-to-openmp gives it, as stacksave/stackrestore.

// CHECK-LABEL: func.func @stack(
// CHECK: omp.loop_nest
// CHECK-NEXT: %[[S:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: memref.alloca() : memref<1024xf32>
// CHECK: llvm.intr.stackrestore %[[S]] : !llvm.ptr
// CHECK-NEXT: omp.yield
func.func @stack(%a: memref<64x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %t = memref.alloca() : memref<1024xf32>
    scf.for %j = %c0 to %c1024 step %c1 {
      %x = memref.load %a[%i, %j] : memref<64x1024xf32>
      memref.store %x, %t[%j] : memref<1024xf32>
    }
    scf.for %j = %c0 to %c1024 step %c1 {
      %x = memref.load %t[%j] : memref<1024xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %a[%i, %j] : memref<64x1024xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A loop whose bound is a partial tile's size (affine.min of the tile and
// what is left, a K block of 784 = 3 x 256 + 16) counts as the full tile
// (256 trips): 16 x 4 x 256 x 34 operations (a 256-element vector add
// counts 32), enough to run in parallel (min-work 2^17).  A bound that is
// no constant and no such min is assumed 16 trips (16 x 4 x 16 x 34
// operations: sequential).

// CHECK-LABEL: func.func @partial_tile(
// CHECK: omp.parallel
// CHECK: omp.loop_nest
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-LABEL: func.func @unknown_bound(
// CHECK-NOT: omp.
// CHECK: scf.for
// CHECK-NOT: omp.
func.func @partial_tile(%a: memref<16x784x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c784 = arith.constant 784 : index
  %v = arith.constant dense<1.0> : vector<256xf32>
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.for %kb = %c0 to %c784 step %c256 {
      %n = affine.min affine_map<(d0) -> (-d0 + 784, 256)>(%kb)
      scf.for %k = %c0 to %n step %c1 {
        %r = arith.addi %kb, %k : index
        %w = arith.addf %v, %v : vector<256xf32>
        vector.store %w, %a[%i, %r, %c0] : memref<16x784x256xf32>, vector<256xf32>
      }
    }
    scf.reduce
  }
  return
}
func.func @unknown_bound(%a: memref<16x784x256xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c784 = arith.constant 784 : index
  %v = arith.constant dense<1.0> : vector<256xf32>
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.for %kb = %c0 to %c784 step %c256 {
      scf.for %k = %c0 to %n step %c1 {
        %r = arith.addi %kb, %k : index
        %w = arith.addf %v, %v : vector<256xf32>
        vector.store %w, %a[%i, %r, %c0] : memref<16x784x256xf32>, vector<256xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// An scf.for marked gradir.independent_iterations (rlx-to-linalg's loops
// over blocks of images: each iteration writes its own slice) runs on the
// threads like a one-dimensional scf.parallel when it has the work; the
// scf.parallel loops inside it become sequential.  Unmarked loops, marked
// ones with too little work, and threads=1 leave the scf.for as it is.

// CHECK-LABEL: func.func @blocks(
// CHECK: omp.parallel
// CHECK-NEXT: omp.wsloop schedule(guided) {
// CHECK-NEXT: omp.loop_nest (%[[B:.*]]) : index
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[%[[B]], %{{.*}}]
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func @unmarked(
// CHECK-NOT: omp.
// CHECK: scf.for
// CHECK-LABEL: func.func @few_blocks(
// CHECK-NOT: omp.
// CHECK: scf.for
// CHECK-NOT: omp.
// A marked loop whose iterations all write one buffer made outside it (a
// scratch matrix bufferization hoisted: the same addresses every time)
// stays serial, even through a view; one writing a view at the block's
// offset, or a buffer of its own, runs on the threads.
// (The serial loop's inner loops then run on the threads themselves.)
// CHECK-LABEL: func.func @shared_scratch(
// CHECK-NOT: omp.
// CHECK: scf.for
// CHECK: omp.parallel
// CHECK: } {gradir.independent_iterations}
// CHECK-LABEL: func.func @shared_scratch_view(
// CHECK-NOT: omp.
// CHECK: scf.for
// CHECK: } {gradir.independent_iterations}
// CHECK-LABEL: func.func @own_slice_and_scratch(
// CHECK-NEXT: arith.constant
// CHECK-NOT: scf.for
// CHECK: omp.parallel
// CHECK-NEXT: omp.wsloop
// CHECK-NEXT: omp.loop_nest
// CHECK-NOT: gradir.independent_iterations
// CHECK-LABEL: func.func @shared_scratch_arg(
// CHECK-NOT: omp.
// CHECK: scf.for
// CHECK: } {gradir.independent_iterations}

// ONE-LABEL: func.func @blocks(
// ONE-NOT: omp.
// ONE: scf.for {{.*}} {
// ONE: } {gradir.independent_iterations}

// AGAIN-LABEL: func.func @blocks(
// AGAIN: omp.parallel
// AGAIN-NOT: omp.parallel
// AGAIN-LABEL: func.func @unmarked(
func.func @blocks(%a: memref<16x65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c65536 = arith.constant 65536 : index
  scf.for %b = %c0 to %c16 step %c1 {
    scf.parallel (%j) = (%c0) to (%c65536) step (%c1) {
      %x = memref.load %a[%b, %j] : memref<16x65536xf32>
      %y = math.exp %x : f32
      memref.store %y, %a[%b, %j] : memref<16x65536xf32>
      scf.reduce
    }
  } {gradir.independent_iterations}
  return
}
func.func @unmarked(%a: memref<16x65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c65536 = arith.constant 65536 : index
  scf.for %b = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c65536 step %c1 {
      %x = memref.load %a[%b, %j] : memref<16x65536xf32>
      %y = math.exp %x : f32
      memref.store %y, %a[%b, %j] : memref<16x65536xf32>
    }
  }
  return
}
func.func @few_blocks(%a: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %b = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %a[%b, %j] : memref<16x8xf32>
      memref.store %x, %a[%b, %j] : memref<16x8xf32>
    }
  } {gradir.independent_iterations}
  return
}
func.func @shared_scratch(%a: memref<16x65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c65536 = arith.constant 65536 : index
  %t = memref.alloc() : memref<65536xf32>
  scf.for %b = %c0 to %c16 step %c1 {
    scf.parallel (%j) = (%c0) to (%c65536) step (%c1) {
      %x = memref.load %a[%b, %j] : memref<16x65536xf32>
      %y = math.exp %x : f32
      memref.store %y, %t[%j] : memref<65536xf32>
      scf.reduce
    }
    scf.parallel (%j) = (%c0) to (%c65536) step (%c1) {
      %y = memref.load %t[%j] : memref<65536xf32>
      memref.store %y, %a[%b, %j] : memref<16x65536xf32>
      scf.reduce
    }
  } {gradir.independent_iterations}
  memref.dealloc %t : memref<65536xf32>
  return
}
func.func @shared_scratch_view(%a: memref<16x65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c65536 = arith.constant 65536 : index
  %t = memref.alloc() : memref<2x65536xf32>
  scf.for %b = %c0 to %c16 step %c1 {
    %v = memref.subview %t[1, 0] [1, 65536] [1, 1] : memref<2x65536xf32> to memref<65536xf32, strided<[1], offset: 65536>>
    scf.parallel (%j) = (%c0) to (%c65536) step (%c1) {
      %x = memref.load %a[%b, %j] : memref<16x65536xf32>
      memref.store %x, %v[%j] : memref<65536xf32, strided<[1], offset: 65536>>
      scf.reduce
    }
    scf.parallel (%j) = (%c0) to (%c65536) step (%c1) {
      %y = memref.load %v[%j] : memref<65536xf32, strided<[1], offset: 65536>>
      %z = math.exp %y : f32
      memref.store %z, %a[%b, %j] : memref<16x65536xf32>
      scf.reduce
    }
  } {gradir.independent_iterations}
  memref.dealloc %t : memref<2x65536xf32>
  return
}
func.func @own_slice_and_scratch(%a: memref<16x65536xf32>, %o: memref<16x65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c65536 = arith.constant 65536 : index
  scf.for %b = %c0 to %c16 step %c1 {
    %t = memref.alloc() : memref<65536xf32>
    %row = memref.subview %o[%b, 0] [1, 65536] [1, 1] : memref<16x65536xf32> to memref<65536xf32, strided<[1], offset: ?>>
    scf.parallel (%j) = (%c0) to (%c65536) step (%c1) {
      %x = memref.load %a[%b, %j] : memref<16x65536xf32>
      %y = math.exp %x : f32
      memref.store %y, %t[%j] : memref<65536xf32>
      scf.reduce
    }
    memref.copy %t, %row : memref<65536xf32> to memref<65536xf32, strided<[1], offset: ?>>
    memref.dealloc %t : memref<65536xf32>
  } {gradir.independent_iterations}
  return
}
func.func @shared_scratch_arg(%a: memref<16x65536xf32>, %t: memref<65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c65536 = arith.constant 65536 : index
  scf.for %b = %c0 to %c16 step %c1 {
    %row = memref.subview %a[%b, 0] [1, 65536] [1, 1] : memref<16x65536xf32> to memref<65536xf32, strided<[1], offset: ?>>
    memref.copy %row, %t : memref<65536xf32, strided<[1], offset: ?>> to memref<65536xf32>
    scf.parallel (%j) = (%c0) to (%c65536) step (%c1) {
      %y = memref.load %t[%j] : memref<65536xf32>
      %z = math.exp %y : f32
      memref.store %z, %a[%b, %j] : memref<16x65536xf32>
      scf.reduce
    }
  } {gradir.independent_iterations}
  return
}

// -----

// hot-min-work: a loop nest with less work than min-work but at least
// hot-min-work (here 16 x 64 x 4 = 4096 operations, the terminator
// counted) runs on the threads only while the calling thread's libomp
// block time is nonzero (workers spinning between regions, see
// gradir/runtime/openmp.py): its OpenMP region gets that condition as its
// `if` clause, so otherwise the calling thread runs the same region alone
// (one copy of the loop).  Loops under hot-min-work stay sequential.

// HOT: llvm.func @kmp_get_blocktime() -> i32
// HOT-NEXT: func.func @mid(
// HOT: %[[BT:.*]] = llvm.call @kmp_get_blocktime() : () -> i32
// HOT-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// HOT-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[BT]], %[[ZERO]] : i32
// HOT-NOT: scf.if
// HOT: omp.parallel if(%[[ON]]) num_threads(%{{.*}} : i32) {
// HOT-NEXT: omp.wsloop schedule(guided) {
// HOT-NEXT: omp.loop_nest (%[[I:.*]]) : index
// HOT-NEXT: scf.for %[[J:.*]] =
// HOT-NEXT: memref.load %{{.*}}[%[[I]], %[[J]]]
// HOT-NOT: scf.for
// HOT-NOT: omp.parallel
// HOT: return
// HOT-LABEL: func.func @tiny(
// HOT-NOT: omp.
// HOT-NOT: kmp_get_blocktime
// HOT: return

// CHECK-LABEL: func.func @mid(
// CHECK-NOT: kmp_get_blocktime
// CHECK-LABEL: func.func @tiny(
func.func @mid(%a: memref<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c16, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<16x64xf32>
    %y = math.exp %x : f32
    memref.store %y, %a[%i, %j] : memref<16x64xf32>
    scf.reduce
  }
  return
}
func.func @tiny(%a: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<2x4xf32>
    memref.store %x, %a[%i, %j] : memref<2x4xf32>
    scf.reduce
  }
  return
}

// -----

// An op marked gradir.work (rlx-matmul-kernels' kernel calls) counts that
// much work: two calls of 2^20 units each make a loop worth the threads
// (min-work 2^17 by default), the same loop of unmarked calls does not.
// CHECK-LABEL: func.func @marked_work(
// CHECK: omp.parallel
// CHECK: call @work
// CHECK-LABEL: func.func @unmarked_work(
// CHECK-NOT: omp.parallel
// CHECK: call @work
func.func private @work(index)
func.func @marked_work() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    func.call @work(%i) {gradir.work = 1048576 : i64} : (index) -> ()
    scf.reduce
  }
  return
}
func.func @unmarked_work() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    func.call @work(%i) : (index) -> ()
    scf.reduce
  }
  return
}
