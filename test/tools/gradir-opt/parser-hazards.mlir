// Text on which MLIR's parser aborts the process (an assertion, SIGABRT,
// exit code 134 before the check) is refused before parsing, located: a
// dense array of `index` (`array<index: 1>`, `array<index>`), found by
// mutating the attributes of the test inputs.  Strings and comments that
// mention it (this one: array<index: 1>) are no problem.
// RUN: not gradir-opt %s 2>&1 | FileCheck %s
// RUN: not gradir-run %s --random-inputs 0 2>&1 | FileCheck %s
// RUN: %PYTHON -c "import gradir, sys; t = open(sys.argv[1]).read(); exec('try:\n gradir.parse(t, source_name=\'p.mlir\')\nexcept ValueError as e:\n print(\'ValueError:\', e)')" %s | FileCheck %s --check-prefix=API
// RUN: sed -e 's/array<index: 1, 0>/array<i64: 1, 0>/' -e 's/array < index>/"x"/' %s | gradir-opt | FileCheck %s --check-prefix=QUOTED
// Names whose escapes make bytes that are not UTF-8 (an attribute name, a
// symbol, a location's file) parsed, then every reader of them in the
// bindings failed (an internal error in each pass); a string attribute's
// value may hold any bytes (a GPU binary's), but rlx's string attributes must
// be text.
// RUN: printf 'module attributes {"\\FF" = 1 : i64} {}' > %t.attr.mlir
// RUN: not gradir-opt %t.attr.mlir 2>&1 | FileCheck %s --check-prefix=NAME -DCOL=20
// RUN: printf 'func.func @"a\\C3"() {\n  return\n}' > %t.sym.mlir
// RUN: not gradir-opt %t.sym.mlir --rlx-gradient 2>&1 | FileCheck %s --check-prefix=NAME -DCOL=12
// RUN: printf 'func.func @f() {\n  return\n} loc("\\FF":1:1)' > %t.loc.mlir
// RUN: not gradir-opt %t.loc.mlir 2>&1 | FileCheck %s --check-prefix=LOC
// RUN: printf 'module attributes {gradir.blob = "\\7FELF\\FF"} {}' | gradir-opt | FileCheck %s --check-prefix=BLOB
// RUN: printf 'func.func @f(%%%%x: tensor<4x3xf32>, %%%%t: tensor<4xi64>) -> tensor<f32> {\n  %%%%0 = "rlx.nll_loss"(%%%%x, %%%%t) {reduction = "\\FF"} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>\n  return %%%%0 : tensor<f32>\n}' > %t.nll.mlir
// RUN: not gradir-opt %t.nll.mlir 2>&1 | FileCheck %s --check-prefix=VALUE
// NAME: :1:[[COL]]: error: this name's escapes make bytes that are not UTF-8 text, which gradir cannot read
// LOC: :3:7: error: this name's escapes make bytes that are not UTF-8 text
// BLOB: gradir.blob = "\7FELF\FF"
// VALUE: :2:8: error: 'rlx.nll_loss' op attribute 'reduction' must be string, got "\FF"
// An elision limit larger than an int64 elides nothing (it was an internal error).
// RUN: sed -e 's/array<index: 1, 0>/array<i64: 1, 0>/' -e 's/array < index>/"x"/' %s | gradir-opt --mlir-elide-elementsattrs-if-larger=99999999999999999999999 | FileCheck %s --check-prefix=QUOTED

// CHECK-NOT: Traceback
// CHECK: parser-hazards.mlir:[[@LINE+3]]:62: error: dense arrays of 'index' are not supported (MLIR's parser aborts on them): use array<i64: ...>
// API: ValueError: p.mlir:[[@LINE+2]]:62: dense arrays of 'index' are not supported
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "rlx.permute_dims"(%x) {note = "array<index>", axes = array<index: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @other() attributes {gradir.x = array < index>} {
  return
}
// QUOTED: "rlx.permute_dims"(%arg0) {axes = array<i64: 1, 0>, note = "array<index>"}
