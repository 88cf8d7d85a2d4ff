// Streams that never end (a device, a pipe) are refused as soon as they
// cannot be MLIR input, instead of being read until memory runs out:
// /dev/zero at its first NUL byte, `yes` past 2 GiB (not run here: it takes
// seconds); a truncated UTF-8 character at the end is not text either.
// An empty -o is a usage error (it was "Is a directory", the current one).
// RUN: not gradir-opt /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not gradir-opt - < /dev/zero 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: not gradir-run /dev/zero --random-inputs 0 2>&1 | FileCheck %s --check-prefix=RUNNER
// RUN: printf 'module {}\n\303' | not gradir-opt 2>&1 | FileCheck %s --check-prefix=CUT
// RUN: gradir-opt %s --emit-bytecode | gradir-opt | FileCheck %s --check-prefix=BYTECODE
// RUN: not gradir-opt %s -o '' 2>&1 | FileCheck %s --check-prefix=EMPTY

// ZERO: gradir-opt: error: could not open input file '/dev/zero': not text (a NUL byte at byte 0)
// STDIN: gradir-opt: error: could not open standard input: not text (a NUL byte at byte 0)
// RUNNER: gradir-run: error: could not open input file '/dev/zero': not text (a NUL byte at byte 0)
// CUT: gradir-opt: error: could not open standard input: not UTF-8 text (byte 10)
// BYTECODE: func.func @main
// EMPTY: gradir-opt: error: option '-o' requires a file name
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
