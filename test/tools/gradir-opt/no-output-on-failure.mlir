// -o is never written (not even truncated) when the run fails.
// RUN: rm -f %t && not gradir-opt %s --pass-pipeline='builtin.module(no-such-pass)' -o %t
// RUN: not test -e %t
// RUN: echo keep > %t && not gradir-opt %s --pass-pipeline='builtin.module(no-such-pass)' -o %t
// RUN: FileCheck %s --check-prefix=KEEP --input-file=%t
// KEEP: keep
// An output that cannot be written is an error, not a traceback; a written
// one gets the usual permissions (not mkstemp's 0600).
// RUN: not gradir-opt %s -o %t.nodir/out.mlir 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: gradir-opt: error: could not write output file '{{.*}}nodir/out.mlir': No such file or directory
// RUN: rm -f %t.ok && umask 022 && gradir-opt %s -o %t.ok && %PYTHON -c "import os, stat; print(oct(stat.S_IMODE(os.stat('%t.ok').st_mode)))" | FileCheck %s --check-prefix=MODE
// MODE: 0o644
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
