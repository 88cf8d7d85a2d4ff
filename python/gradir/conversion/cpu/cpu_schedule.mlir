// gradir's CPU schedule (transform dialect), run by the CPU pipeline:
//   transform-preload-library{transform-library-paths=<this file>}
//   transform-interpreter{entry-point=gradir_cpu_tensor}
// on linalg-on-tensors, before bufferization.
//
// Every f32/f64 linalg.matmul and linalg.batch_matmul is padded with zeros to
// a multiple of the register tile (a no-op when the shape divides), tiled in
// K blocks of 256 (the rhs panel of a block stays in L1), then to the
// register tile (M x N x 1; N-tile loop outside the M-tile loop, K innermost),
// vectorized, and its contraction lowered to outer products, i.e. vector.fma
// on broadcast lhs elements; the accumulator tile is hoisted out of the K
// loop, so it lives in registers.  Register tiles: f32 8x32 (16 zmm of
// 16 lanes), f64 8x16 (16 zmm of 8 lanes).  2-D linalg.transpose ops are
// tiled 16x16, vectorized (masked at the edges) and lowered with the
// shuffle_16x16 strategy.  Other ops are left to linalg-fuse-elementwise-ops
// and convert-linalg-to-loops (LLVM vectorizes the resulting loops).
//
// The register tiles were picked on an AVX-512 machine (Zen 5, 2 cores) with
// test/conversion/Inputs/gemm_bench.py and the MLP gradient step: f32 6x64
// was faster on 512^3 alone but pads M=64/784 (copies); 8x32 divides the
// usual sizes.
module attributes {transform.with_named_sequence} {

  // ----- matchers: op name + element bitwidth of the accumulator -----

  transform.named_sequence @match_matmul_f32(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.include @match_bitwidth_32 failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @match_matmul_f64(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.include @match_bitwidth_64 failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @match_batch_matmul_f32(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.batch_matmul"] : !transform.any_op
    transform.include @match_bitwidth_32 failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @match_batch_matmul_f64(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.batch_matmul"] : !transform.any_op
    transform.include @match_bitwidth_64 failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @match_bitwidth_32(%op: !transform.any_op {transform.readonly}) {
    %0 = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %init = transform.match.structured.init %s[0] : (!transform.any_op) -> !transform.any_value
      %bw = transform.match.structured.elemental_bitwidth %init : (!transform.any_value) -> !transform.param<i64>
      %c = transform.param.constant 32 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %bw, %c : !transform.param<i64>
      transform.match.structured.yield %s : !transform.any_op
    }
    transform.yield
  }

  transform.named_sequence @match_bitwidth_64(%op: !transform.any_op {transform.readonly}) {
    %0 = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %init = transform.match.structured.init %s[0] : (!transform.any_op) -> !transform.any_value
      %bw = transform.match.structured.elemental_bitwidth %init : (!transform.any_value) -> !transform.param<i64>
      %c = transform.param.constant 64 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %bw, %c : !transform.param<i64>
      transform.match.structured.yield %s : !transform.any_op
    }
    transform.yield
  }

  // ----- after tiling: vectorize the register tile, keep the accumulator in registers -----

  transform.named_sequence @vectorize_tile(%tile: !transform.any_op {transform.consumed},
                                           %k_loop: !transform.any_op {transform.readonly}) {
    %f = transform.get_parent_op %tile {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tile : !transform.any_op
    // No canonicalization before the hoisting: it would fold a one-trip K
    // loop away and invalidate %k_loop.
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.reduction_to_contract
    } : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %k_loop : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }

  // ----- actions -----

  transform.named_sequence @schedule_matmul_f32(%op: !transform.any_op {transform.consumed}) {
    %padded, %pad, %copy = transform.structured.pad %op pad_to_multiple_of [8, 32, 1] {copy_back_op = "none", padding_dimensions = [0, 1, 2], padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %kb, %lk = transform.structured.tile_using_for %padded tile_sizes [0, 0, 256] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t, %l:3 = transform.structured.tile_using_for %kb tile_sizes [8, 32, 1] interchange = [1, 0, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @vectorize_tile failures(propagate) (%t, %l#2) : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @schedule_matmul_f64(%op: !transform.any_op {transform.consumed}) {
    %padded, %pad, %copy = transform.structured.pad %op pad_to_multiple_of [8, 16, 1] {copy_back_op = "none", padding_dimensions = [0, 1, 2], padding_values = [0.0 : f64, 0.0 : f64, 0.0 : f64]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %kb, %lk = transform.structured.tile_using_for %padded tile_sizes [0, 0, 256] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t, %l:3 = transform.structured.tile_using_for %kb tile_sizes [8, 16, 1] interchange = [1, 0, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @vectorize_tile failures(propagate) (%t, %l#2) : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @schedule_batch_matmul_f32(%op: !transform.any_op {transform.consumed}) {
    %padded, %pad, %copy = transform.structured.pad %op pad_to_multiple_of [1, 8, 32, 1] {copy_back_op = "none", padding_dimensions = [0, 1, 2, 3], padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %kb, %lk = transform.structured.tile_using_for %padded tile_sizes [0, 0, 0, 256] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t, %l:4 = transform.structured.tile_using_for %kb tile_sizes [1, 8, 32, 1] interchange = [0, 2, 1, 3] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @vectorize_tile failures(propagate) (%t, %l#3) : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @schedule_batch_matmul_f64(%op: !transform.any_op {transform.consumed}) {
    %padded, %pad, %copy = transform.structured.pad %op pad_to_multiple_of [1, 8, 16, 1] {copy_back_op = "none", padding_dimensions = [0, 1, 2, 3], padding_values = [0.0 : f64, 0.0 : f64, 0.0 : f64]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %kb, %lk = transform.structured.tile_using_for %padded tile_sizes [0, 0, 0, 256] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t, %l:4 = transform.structured.tile_using_for %kb tile_sizes [1, 8, 16, 1] interchange = [0, 2, 1, 3] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @vectorize_tile failures(propagate) (%t, %l#3) : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }

  // ----- transposes: 16x16 blocks, masked at the edges -----

  transform.named_sequence @match_transpose_2d(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.transpose"] : !transform.any_op
    %0 = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %rank = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %c2 = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %c2 : !transform.param<i64>
      transform.match.structured.yield %s : !transform.any_op
    }
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @schedule_transpose_2d(%op: !transform.any_op {transform.consumed}) {
    %t, %l:2 = transform.structured.tile_using_for %op tile_sizes [16, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %t vector_sizes [16, 16] : !transform.any_op
    transform.yield
  }

  // ----- before elementwise fusion: reductions and broadcasts as generics -----

  // linalg-fuse-elementwise-ops fuses into and from linalg.generic only;
  // generalized, a reduction absorbs its elementwise producers (exp -> sum)
  // and a broadcast folds into its consumers' indexing maps.
  transform.named_sequence @gradir_cpu_generalize(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["linalg.reduce", "linalg.broadcast"]} in %root : (!transform.any_op) -> !transform.any_op
    %g = transform.structured.generalize %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }

  // ----- entry point -----

  transform.named_sequence @gradir_cpu_tensor(%root: !transform.any_op {transform.consumed}) {
    %r = transform.foreach_match in %root
        @match_matmul_f32 -> @schedule_matmul_f32,
        @match_matmul_f64 -> @schedule_matmul_f64,
        @match_batch_matmul_f32 -> @schedule_batch_matmul_f32,
        @match_batch_matmul_f64 -> @schedule_batch_matmul_f64,
        @match_transpose_2d -> @schedule_transpose_2d
      : (!transform.any_op) -> !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %r : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16"
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
