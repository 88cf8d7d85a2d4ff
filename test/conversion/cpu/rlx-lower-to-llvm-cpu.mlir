// RUN: gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v3 stage=bufferized threads=1' | FileCheck %s --check-prefix=AVX2
// RUN: gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v4 stage=bufferized threads=1' | FileCheck %s --check-prefix=AVX512
// RUN: gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v3' | FileCheck %s --check-prefix=LLVM
// RUN: gradir-opt %s --rlx-lower-to-llvm | FileCheck %s --check-prefix=HOST
// RUN: not gradir-opt %s --rlx-lower-to-llvm='cpu=pentium-mmx' 2>&1 | FileCheck %s --check-prefix=ERR

// The cpu option picks the schedule instance: AVX2 (16 ymm) gets a 6x16
// f32 register tile (12 accumulators of 8 lanes), AVX-512 (32 zmm) 8x32;
// the LLVM functions carry the target's CPU and features (every AVX-512
// feature off for x86-64-v3), and are not inlined into ExecutionEngine's
// host-compiled wrappers.  The host target leaves LLVM's CPU to the JIT.

// AVX2-LABEL: func.func @gemm(
// AVX2: scf.for {{.*}} step %c16 {
// AVX2: memref.subview {{.*}} [60, 16] [1, 1]
// AVX2-NEXT: scf.for {{.*}} step %c6 {
// AVX2-NEXT: memref.subview {{.*}} [6, 16] [1, 1]
// AVX2-NEXT: vector.transfer_read {{.*}} vector<6x16xf32>
// AVX2: vector.fma {{.*}} : vector<16xf32>

// AVX512-LABEL: func.func @gemm(
// AVX512: vector.transfer_read {{.*}} vector<8x32xf32>
// AVX512: vector.fma {{.*}} : vector<32xf32>

// LLVM-LABEL: llvm.func @gemm(
// LLVM-SAME: no_inline, target_cpu = "x86-64-v3", target_features = #llvm.target_features<[{{.*}}"+avx2", "+fma"{{.*}}"-avx512f"
// LLVM-LABEL: llvm.func @_mlir_ciface_gemm(
// LLVM-SAME: no_inline, target_cpu = "x86-64-v3"

// HOST-LABEL: llvm.func @gemm(
// HOST-NOT: target_cpu
// HOST: llvm.return

// ERR: error: option 'cpu' of pass 'rlx-lower-to-llvm' must be host or one of {{.*}}x86-64-v3{{.*}}, got 'pentium-mmx'
func.func @gemm(%a: tensor<60x64xf32>, %b: tensor<64x64xf32>) -> tensor<60x64xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<60x64xf32>, tensor<64x64xf32>) -> tensor<60x64xf32>
  return %0 : tensor<60x64xf32>
}
