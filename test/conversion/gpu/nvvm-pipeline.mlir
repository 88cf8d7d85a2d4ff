// The NVVM pipeline (gradir.conversion.gpu.nvvm.nvvm_pipeline) stage by stage on
// a function and its gradient: kernels on device buffers, outlined NVVM
// kernels with LLVM host code, and PTX with one .entry per kernel.
// RUN: gradir-opt %s --pass-pipeline='builtin.module(rlx-gradient{func=main},rlx-to-linalg,inline,symbol-dce,canonicalize,cse,linalg-fuse-elementwise-ops,canonicalize,cse,linalg-generalize-named-ops,gpu-fold-zero-init,canonicalize,cse,eliminate-empty-tensors,empty-tensor-to-alloc-tensor,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,gpu-device-buffers,linalg-generalize-named-ops,gpu-linalg-to-kernels,canonicalize,cse,gpu-check-host,gpu-persistent-buffers,canonicalize,cse)' | FileCheck %s --check-prefix=KERNELS
// RUN: gradir-opt %s --pass-pipeline='builtin.module(rlx-gradient{func=main},rlx-to-linalg,inline,symbol-dce,canonicalize,cse,linalg-fuse-elementwise-ops,canonicalize,cse,linalg-generalize-named-ops,gpu-fold-zero-init,canonicalize,cse,eliminate-empty-tensors,empty-tensor-to-alloc-tensor,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,gpu-device-buffers,linalg-generalize-named-ops,gpu-linalg-to-kernels,canonicalize,cse,gpu-check-host,gpu-persistent-buffers,canonicalize,cse,gpu-launch-sink-index-computations,gpu-kernel-outlining,gpu-kernel-attributes,gpu-check-host,nvvm-attach-target{chip=sm_90 O=3},gpu.module(fold-memref-alias-ops,expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),func.func(llvm-request-c-wrappers),func.func(gpu-async-region),fold-memref-alias-ops,expand-strided-metadata,lower-affine,convert-scf-to-cf,gpu-to-llvm,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=NVVM
// RUN: gradir-opt %s --pass-pipeline='builtin.module(rlx-gradient{func=main},rlx-to-linalg,inline,symbol-dce,canonicalize,cse,linalg-fuse-elementwise-ops,canonicalize,cse,linalg-generalize-named-ops,gpu-fold-zero-init,canonicalize,cse,eliminate-empty-tensors,empty-tensor-to-alloc-tensor,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,gpu-device-buffers,linalg-generalize-named-ops,gpu-linalg-to-kernels,canonicalize,cse,gpu-check-host,gpu-persistent-buffers,canonicalize,cse,gpu-launch-sink-index-computations,gpu-kernel-outlining,gpu-kernel-attributes,gpu-check-host,nvvm-attach-target{chip=sm_90 O=3},gpu.module(fold-memref-alias-ops,expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),func.func(llvm-request-c-wrappers),func.func(gpu-async-region),fold-memref-alias-ops,expand-strided-metadata,lower-affine,convert-scf-to-cf,gpu-to-llvm,convert-to-llvm,reconcile-unrealized-casts,gpu-module-to-binary{format=isa})' | FileCheck %s --check-prefix=PTX

// Host code: upload the inputs into the arena, launch, copy the results back.
// KERNELS-LABEL: func.func @main_adjoint(
// KERNELS-SAME: %[[X:[a-z0-9]+]]: memref<64x32xf32>, %[[W:[a-z0-9]+]]: memref<32x16xf32>, %[[LOSS:[a-z0-9]+]]: memref<f32>, %[[GX:[a-z0-9]+]]: memref<64x32xf32>, %[[GW:[a-z0-9]+]]: memref<32x16xf32>)
// KERNELS:      %[[ARENA:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<{{[0-9]+}}xi8>
// KERNELS:      %[[DX:.*]] = memref.view %[[ARENA]]
// KERNELS-NEXT: gpu.memcpy %[[DX]], %[[X]]
// KERNELS:      %[[DW:.*]] = memref.view %[[ARENA]]
// KERNELS-NEXT: gpu.memcpy %[[DW]], %[[W]]
// KERNELS-NOT:  linalg.
// KERNELS:      gpu.launch {{.*}} function(@main_adjoint_gemm_0) workgroup(
// KERNELS:        gpu.barrier
// KERNELS:      gpu.launch {{.*}} function(@main_adjoint_reduce_1) workgroup(
// KERNELS:      gpu.launch {{.*}} function(@main_adjoint_map_2) {
// KERNELS:      gpu.launch {{.*}} function(@main_adjoint_gemm_{{[0-9]+}}) workgroup(
// KERNELS:      gpu.launch {{.*}} function(@main_adjoint_gemm_{{[0-9]+}}) workgroup(
// KERNELS-NOT:  linalg.
// KERNELS:      gpu.memcpy %[[LOSS]]
// KERNELS-NEXT: gpu.memcpy %[[GX]]
// KERNELS-NEXT: gpu.memcpy %[[GW]]
// KERNELS-NEXT: return

// Kernels outlined into one gpu.module per function, lowered to NVVM (@main's
// relu is its GEMM's epilogue: no kernel of its own).
// NVVM:      gpu.module @main_kernels [#nvvm.target<O = 3, chip = "sm_90">]
// NVVM:      llvm.func @main_gemm_0({{.*}}) attributes {gpu.kernel, {{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 16, 16, 1>, nvvm.minctasm = 2 : i32}
// NVVM:        nvvm.read.ptx.sreg.tid.x
// NVVM:        nvvm.barrier0
// NVVM:      llvm.func @main_reduce_1(
// NVVM-LABEL: llvm.func @main_adjoint(
// NVVM:        llvm.call @mgpuStreamCreate()
// NVVM:        llvm.call @mgpuMemcpy
// NVVM:        gpu.launch_func <%{{.*}} : !llvm.ptr> @main_adjoint_kernels::@main_adjoint_gemm_0 blocks in
// NVVM:        llvm.call @mgpuStreamSynchronize
// NVVM-LABEL: llvm.func @_mlir_ciface_main_adjoint(

// PTX text for sm_90, one .entry per kernel.
// PTX:      gpu.binary @main_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry main_gemm_0({{.*}}bar.sync{{.*}}.visible .entry main_reduce_1(
// PTX:      gpu.binary @main_adjoint_kernels  [#gpu.object<{{.*}}.visible .entry main_adjoint_gemm_0(
// PTX-NOT:  gpu.module

func.func @main(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>) -> tensor<f32> {
  %h = "rlx.matmul"(%x, %w) : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %r = "rlx.relu"(%h) : (tensor<64x16xf32>) -> tensor<64x16xf32>
  %s = "rlx.sum"(%r) : (tensor<64x16xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
