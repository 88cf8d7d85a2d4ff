// Bad checkpointing options are pipeline errors, one RUN line each.
// RUN: not gradir-opt %s --rlx-gradient='remat=bogus' 2>&1 | FileCheck %s --check-prefix=REMAT
// RUN: not gradir-opt %s --rlx-gradient='remat=auto' 2>&1 | FileCheck %s --check-prefix=NOBUDGET
// RUN: not gradir-opt %s --rlx-gradient='budget=0.5' 2>&1 | FileCheck %s --check-prefix=NOAUTO
// RUN: not gradir-opt %s --rlx-gradient='remat=auto budget=lots' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not gradir-opt %s --rlx-gradient='remat=auto budget=nan' 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not gradir-opt %s --rlx-gradient='remat=auto budget=1e400' 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not gradir-opt %s --rlx-gradient='remat=auto budget=-1' 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not gradir-opt %s --rlx-gradient='remat=auto budget=12parsecs' 2>&1 | FileCheck %s --check-prefix=UNIT
// 1.5 is neither a fraction nor whole bytes (it meant 1 byte):
// RUN: not gradir-opt %s --rlx-gradient='remat=auto budget=1.5' 2>&1 | FileCheck %s --check-prefix=FRACTION

// REMAT: <pass-pipeline>:1:{{[0-9]+}}: error: option 'remat' of pass 'rlx-gradient' must be one of none, auto, got 'bogus'
// NOBUDGET: error: remat=auto needs a budget (bytes, or a fraction of the store-everything peak), e.g. budget=0.5
// NOAUTO: error: option 'budget' of pass 'rlx-gradient' is only used with remat=auto
// BAD: error: option 'budget' of pass 'rlx-gradient' expects bytes (1048576, 64MiB) or a fraction (0.25, 25%), got 'lots'
// FRACTION: error: option 'budget' of pass 'rlx-gradient' expects bytes (1048576, 64MiB) or a fraction (0.25, 25%), got '1.5'
// NEG: error: option 'budget' of pass 'rlx-gradient' expects bytes {{.*}}, got '-1'
// UNIT: error: option 'budget' of pass 'rlx-gradient' expects bytes {{.*}}, got '12parsecs'
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// NAN: <pass-pipeline>:1:16: error: option 'budget' of pass 'rlx-gradient' expects bytes (1048576, 64MiB) or a fraction (0.25, 25%), got 'nan'
// INF: <pass-pipeline>:1:16: error: option 'budget' of pass 'rlx-gradient' expects bytes (1048576, 64MiB) or a fraction (0.25, 25%), got '1e400'
