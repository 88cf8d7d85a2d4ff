// A pass that crashes is a diagnostic at the input and a non-zero exit, not
// a SIGSEGV; the IR it was given goes to the crash reproducer, and -o is not
// written.  Upstream buffer-results-to-out-params{hoist-static-allocs}
// dereferences a freed op when a function returns one buffer twice (gradir's
// own pipelines run rlx-distinct-results first, so they never meet it).
// RUN: rm -f %t.out %t.repro
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(buffer-results-to-out-params{hoist-static-allocs modify-public-functions})' --mlir-pass-pipeline-crash-reproducer=%t.repro -o %t.out 2>&1 | FileCheck %s
// CHECK: crash-recovery.mlir:[[#MODULE:]]:1: error: A signal was caught while processing the MLIR module:reproducer generated at `{{.*}}.repro`; marking pass as failed
// CHECK: crash-recovery.mlir:[[#MODULE]]:1: error: Failures have been detected while processing an MLIR pass pipeline
// CHECK: note: Pipeline failed while executing `BufferResultsToOutParamsPass` on 'builtin.module' operation: reproducer generated at `{{.*}}.repro`
// RUN: not test -e %t.out
// The reproducer is the IR the pass was given, with the pipeline that crashed.
// RUN: FileCheck %s --check-prefix=REPRO --input-file=%t.repro
// REPRO: func.func @twice(%arg0: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
// REPRO: pipeline: "builtin.module(buffer-results-to-out-params{{.*}}hoist-static-allocs=true{{.*}}modify-public-functions=true
// Without a file name the reproducer goes to the temporary directory.
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(buffer-results-to-out-params{hoist-static-allocs modify-public-functions})' 2>&1 | FileCheck %s --check-prefix=TMP
// TMP: reproducer generated at `{{.*}}gradir-crash-reproducer-{{[0-9]+}}.mlir`
// A pipeline that does not crash runs as before (same output with recovery off).
// RUN: gradir-opt %s --pass-pipeline='builtin.module(canonicalize)' > %t.on
// RUN: gradir-opt %s --pass-pipeline='builtin.module(canonicalize)' --crash-recovery=false > %t.off
// RUN: diff %t.on %t.off
// A pass that fails the ordinary way (a refusal) reports only its own
// diagnostics, and no reproducer is left behind.
// RUN: rm -f %t.refused
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-gradient{func=nope})' --mlir-pass-pipeline-crash-reproducer=%t.refused 2>&1 | FileCheck %s --check-prefix=REFUSED
// REFUSED: error: {{.*}}nope
// REFUSED-NOT: Failures have been detected
// REFUSED-NOT: reproducer
// RUN: not test -e %t.refused
// RUN: not gradir-opt %s --mlir-pass-pipeline-crash-reproducer 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: gradir-opt: error: option '--mlir-pass-pipeline-crash-reproducer' requires a file name
module {
  func.func @twice(%a: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
    %b = memref.alloc() : memref<4xf32>
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    return %b, %b : memref<4xf32>, memref<4xf32>
  }
}
