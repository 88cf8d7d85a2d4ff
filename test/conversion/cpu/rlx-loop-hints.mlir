// RUN: gradir-opt %s --rlx-loop-hints | FileCheck %s
// RUN: gradir-opt %s --rlx-loop-hints=disable=unroll,vectorize | FileCheck %s --check-prefix=BOTH
// RUN: gradir-opt %s --pass-pipeline='builtin.module(rlx-loop-hints{disable=vectorize})' | FileCheck %s --check-prefix=VEC
// RUN: gradir-opt %s --rlx-loop-hints | gradir-opt --rlx-loop-hints | FileCheck %s
// Every loop back edge (a branch to a block that does not come after its
// own), in a function's body or in an OpenMP region, gets llvm.loop
// metadata turning LLVM's unrolling off; forward branches, branches that
// already carry an annotation and the latches of innermost scalar loops of
// at most 8 iterations (LLVM unrolls those fully) are left alone.

#keep = #llvm.loop_annotation<mustProgress = true>

// CHECK-DAG: #[[U:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[$A:.*]] = #llvm.loop_annotation<unroll = #[[U]]>
// CHECK-DAG: #[[$KEEP:.*]] = #llvm.loop_annotation<mustProgress = true>
// BOTH-DAG: #[[BU:.*]] = #llvm.loop_unroll<disable = true>
// BOTH-DAG: #[[BV:.*]] = #llvm.loop_vectorize<disable = true>
// BOTH-DAG: #llvm.loop_annotation<vectorize = #[[BV]], unroll = #[[BU]]>
// VEC-DAG: #[[VV:.*]] = #llvm.loop_vectorize<disable = true>
// VEC-DAG: #llvm.loop_annotation<vectorize = #[[VV]]>
// VEC-NOT: loop_unroll

// CHECK-LABEL: llvm.func @loop(
// CHECK:         llvm.br ^bb1(%{{.*}} : i64){{$}}
// CHECK:       ^bb1(
// CHECK:         llvm.cond_br %{{.*}}, ^bb2, ^bb3{{$}}
// CHECK:       ^bb2:
// CHECK:         llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[$A]]}
// CHECK:       ^bb3:
// CHECK-NEXT:    llvm.return
llvm.func @loop(%p: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %f = llvm.mlir.constant(1.0 : f32) : f32
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %c = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %c, ^bb2, ^bb3
^bb2:
  %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %f, %q : f32, !llvm.ptr
  %j = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%j : i64)
^bb3:
  llvm.return
}

// A rotated loop: the conditional branch is the latch; a self loop counts.
// CHECK-LABEL: llvm.func @rotated(
// CHECK:         llvm.cond_br %{{.*}}, ^bb1(%{{.*}} : i64), ^bb2 {loop_annotation = #[[$A]]}
// CHECK:         llvm.return
llvm.func @rotated(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %j = llvm.add %i, %c1 : i64
  %c = llvm.icmp "slt" %j, %n : i64
  llvm.cond_br %c, ^bb1(%j : i64), ^bb2
^bb2:
  llvm.return
}

// An annotation the branch has already is kept.
// CHECK-LABEL: llvm.func @annotated(
// CHECK:         llvm.cond_br %{{.*}}, ^bb1(%{{.*}} : i64), ^bb2 {loop_annotation = #[[$KEEP]]}
llvm.func @annotated(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %j = llvm.add %i, %c1 : i64
  %c = llvm.icmp "slt" %j, %n : i64
  llvm.cond_br %c, ^bb1(%j : i64), ^bb2 {loop_annotation = #keep}
^bb2:
  llvm.return
}

// No loop: nothing changes.
// CHECK-LABEL: llvm.func @straight(
// CHECK-NOT:     loop_annotation
// CHECK:         llvm.return
llvm.func @straight(%c: i1) -> i64 {
  %a = llvm.mlir.constant(1 : i64) : i64
  %b = llvm.mlir.constant(2 : i64) : i64
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  llvm.return %a : i64
^bb2:
  llvm.return %b : i64
}

// An innermost scalar loop with a constant bound of at most 8: left to LLVM.
// CHECK-LABEL: llvm.func @small(
// CHECK:       ^bb2:
// CHECK:         llvm.br ^bb1(%{{.*}} : i64){{$}}
llvm.func @small(%p: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c8 = llvm.mlir.constant(8 : i64) : i64
  %f = llvm.mlir.constant(1.0 : f32) : f32
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %c = llvm.icmp "slt" %i, %c8 : i64
  llvm.cond_br %c, ^bb2, ^bb3
^bb2:
  %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %f, %q : f32, !llvm.ptr
  %j = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%j : i64)
^bb3:
  llvm.return
}

// Nine iterations: marked.
// CHECK-LABEL: llvm.func @nine(
// CHECK:       ^bb2:
// CHECK:         llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[$A]]}
llvm.func @nine(%p: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c9 = llvm.mlir.constant(9 : i64) : i64
  %f = llvm.mlir.constant(1.0 : f32) : f32
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %c = llvm.icmp "slt" %i, %c9 : i64
  llvm.cond_br %c, ^bb2, ^bb3
^bb2:
  %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %f, %q : f32, !llvm.ptr
  %j = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%j : i64)
^bb3:
  llvm.return
}

// Vector code (the schedule's work): marked, however short.
// CHECK-LABEL: llvm.func @small_vector(
// CHECK:       ^bb2:
// CHECK:         llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[$A]]}
llvm.func @small_vector(%p: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %v = llvm.mlir.constant(dense<1.0> : vector<16xf32>) : vector<16xf32>
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %c = llvm.icmp "slt" %i, %c4 : i64
  llvm.cond_br %c, ^bb2, ^bb3
^bb2:
  %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, vector<16xf32>
  llvm.store %v, %q : vector<16xf32>, !llvm.ptr
  %j = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%j : i64)
^bb3:
  llvm.return
}

// A short loop holding another: the outer one is marked, the inner one not.
// CHECK-LABEL: llvm.func @outer(
// CHECK:       ^bb4:
// CHECK:         llvm.br ^bb3(%{{.*}} : i64){{$}}
// CHECK:       ^bb5:
// CHECK:         llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[$A]]}
llvm.func @outer(%p: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %f = llvm.mlir.constant(1.0 : f32) : f32
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %c = llvm.icmp "slt" %i, %c4 : i64
  llvm.cond_br %c, ^bb2, ^bb6
^bb2:
  llvm.br ^bb3(%c0 : i64)
^bb3(%k: i64):
  %d = llvm.icmp "slt" %k, %c4 : i64
  llvm.cond_br %d, ^bb4, ^bb5
^bb4:
  %q = llvm.getelementptr %p[%k] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %f, %q : f32, !llvm.ptr
  %l = llvm.add %k, %c1 : i64
  llvm.br ^bb3(%l : i64)
^bb5:
  %j = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%j : i64)
^bb6:
  llvm.return
}

// A loop in an OpenMP region (multi-threaded code) is marked as well.
// CHECK-LABEL: llvm.func @parallel(
// CHECK:         omp.parallel
// CHECK:         llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[$A]]}
// CHECK:         omp.terminator
llvm.func @parallel(%p: !llvm.ptr, %n: i64) {
  omp.parallel {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %f = llvm.mlir.constant(1.0 : f32) : f32
    llvm.br ^bb1(%c0 : i64)
  ^bb1(%i: i64):
    %c = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %c, ^bb2, ^bb3
  ^bb2:
    %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %f, %q : f32, !llvm.ptr
    %j = llvm.add %i, %c1 : i64
    llvm.br ^bb1(%j : i64)
  ^bb3:
    omp.terminator
  }
  llvm.return
}

llvm.func @declared(i64)

// The loop of a small work-sharing nest (omp.loop_nest, made by LLVM's
// OpenMP translation) carries no metadata of ours: its body starts with an
// empty inline-asm statement, which keeps LLVM from unrolling it (once,
// also when the pass runs twice).  Without unroll in disable, nothing.
// CHECK-LABEL: llvm.func @workshare(
// CHECK:         omp.loop_nest (%{{.*}}) : i64 = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT:      llvm.inline_asm has_side_effects "", "" : () -> ()
// CHECK-NEXT:      llvm.getelementptr
// CHECK-NOT:       llvm.inline_asm
// CHECK:         omp.terminator
// VEC-LABEL: llvm.func @workshare(
// VEC-NOT:       llvm.inline_asm
// VEC:           llvm.return
llvm.func @workshare(%p: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %f = llvm.mlir.constant(1.0 : f32) : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%c0) to (%n) step (%c1) {
        %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
        llvm.store %f, %q : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}
