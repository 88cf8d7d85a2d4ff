// REQUIRES: ptxas
// A cubin (ELF) through ptxas with format=bin.
// RUN: gradir-opt %s --pass-pipeline='builtin.module(rlx-gradient{func=main},rlx-to-linalg,inline,symbol-dce,canonicalize,cse,linalg-fuse-elementwise-ops,canonicalize,cse,linalg-generalize-named-ops,gpu-fold-zero-init,canonicalize,cse,eliminate-empty-tensors,empty-tensor-to-alloc-tensor,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,gpu-device-buffers,linalg-generalize-named-ops,gpu-linalg-to-kernels,canonicalize,cse,gpu-check-host,gpu-persistent-buffers,canonicalize,cse,gpu-launch-sink-index-computations,gpu-kernel-outlining,gpu-kernel-attributes,gpu-check-host,nvvm-attach-target{chip=sm_90 O=3},gpu.module(fold-memref-alias-ops,expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),func.func(llvm-request-c-wrappers),func.func(gpu-async-region),fold-memref-alias-ops,expand-strided-metadata,lower-affine,convert-scf-to-cf,gpu-to-llvm,convert-to-llvm,reconcile-unrealized-casts,gpu-module-to-binary{format=bin})' | FileCheck %s

// CHECK: gpu.binary @main_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, properties = {{.*}}, bin = "\7FELF
// CHECK: gpu.binary @main_adjoint_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}bin = "\7FELF

func.func @main(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>) -> tensor<f32> {
  %h = "rlx.matmul"(%x, %w) : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %r = "rlx.tanh"(%h) : (tensor<64x16xf32>) -> tensor<64x16xf32>
  %s = "rlx.sum"(%r) : (tensor<64x16xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
