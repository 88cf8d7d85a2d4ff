// An op rlx-math-approx has no approximation for is an option error at the
// option (exit 1), not an internal error; so is an empty list element.
// RUN: not gradir-opt %s --rlx-math-approx=ops=exp,sin 2>&1 | FileCheck %s --check-prefix=SIN
// RUN: not gradir-opt %s --rlx-math-approx=ops=exp,,log 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not gradir-opt %s --pass-pipeline='builtin.module(rlx-math-approx{ops=exp ops=log})' 2>&1 | FileCheck %s --check-prefix=TWICE
// SIN: <pass-pipeline>:1:16: error: option 'ops' of pass 'rlx-math-approx' expects list<exp|log|tanh|erf>, got 'exp,sin'
// EMPTY: error: option 'ops' of pass 'rlx-math-approx' expects list<exp|log|tanh|erf>, got 'exp,,log'
// TWICE: error: option 'ops' of pass 'rlx-math-approx' is given twice
func.func @main(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}
