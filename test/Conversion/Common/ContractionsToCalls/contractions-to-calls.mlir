// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls -cse | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls=only-f32 | FileCheck %s --check-prefix=ONLYF32
// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls="only-f32 report-skipped" -verify-diagnostics -o /dev/null

/// Buffer matmuls become calls to the runtime's GEMM: element type codes
/// (f32 0, f16 1, bf16 2, E4M3 3, E5M2 4), whether A and B are stored
/// transposed, batch, M, N, K, the addresses of the first elements (the
/// buffer's aligned pointer plus its offset), and whether C is overwritten
/// (1) rather than accumulated into (0).

// CHECK-LABEL: func.func private @recast_gemm(i32, i32, i32, i32, i32, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32)
// CHECK-LABEL: func.func @mm_f32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 10 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 256 : i64
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[ALIGNED:.*]] = memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %{{.*}} : index
// CHECK: %[[ADDR:.*]] = arith.addi %[[ALIGNED]], %[[BYTES]]
// CHECK: %[[I64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: %[[A:.*]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr
// CHECK: call @recast_gemm(%[[F32]], %[[F32]], %[[F32]], %[[F32]], %[[F32]], %[[ONE]], %[[M]], %[[N]], %[[K]], %[[A]], %{{.*}}, %{{.*}}, %[[F32]])
// CHECK-NOT: linalg.matmul
// ONLYF32-LABEL: func.func @mm_f32
// ONLYF32: call @recast_gemm
func.func @mm_f32(%a: memref<64x256xf32>, %b: memref<256x10xf32>, %c: memref<64x10xf32>) {
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x10xf32>) outs(%c : memref<64x10xf32>)
  return
}

// -----

/// The mixed-precision form: bf16 inputs, FP32 accumulator.
// CHECK-LABEL: func.func @mm_bf16_f32
// CHECK-DAG: %[[BF16:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK: call @recast_gemm(%[[BF16]], %[[BF16]], %[[F32]], %[[F32]], %[[F32]],
// ONLYF32-LABEL: func.func @mm_bf16_f32
// ONLYF32: linalg.matmul
func.func @mm_bf16_f32(%a: memref<64x256xbf16>, %b: memref<256x10xbf16>, %c: memref<64x10xf32>) {
  // expected-remark @below {{contraction stays a loop nest: only f32 contractions are sent to the runtime here}}
  linalg.matmul ins(%a, %b : memref<64x256xbf16>, memref<256x10xbf16>) outs(%c : memref<64x10xf32>)
  return
}

// -----

/// Batched, FP8 x FP8 with a bf16 result, and a view at an offset.
// CHECK-LABEL: func.func @bmm_fp8
// CHECK-DAG: %[[E4M3:.*]] = arith.constant 3 : i32
// CHECK-DAG: %[[E5M2:.*]] = arith.constant 4 : i32
// CHECK-DAG: %[[BF16:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[B8:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[M32:.*]] = arith.constant 32 : i64
// CHECK-DAG: %[[K16:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i32
// CHECK: call @recast_gemm(%[[E4M3]], %[[E5M2]], %[[BF16]], %[[NO]], %[[NO]], %[[B8]], %[[M32]], %[[M32]], %[[K16]],
func.func @bmm_fp8(%a: memref<8x32x16xf8E4M3FN>, %b: memref<8x16x32xf8E5M2>, %c: memref<8x32x32xbf16>) {
  // expected-remark @below {{contraction stays a loop nest: only f32 contractions are sent to the runtime here}}
  linalg.batch_matmul ins(%a, %b : memref<8x32x16xf8E4M3FN>, memref<8x16x32xf8E5M2>) outs(%c : memref<8x32x32xbf16>)
  return
}

// -----

/// Generic contractions in any loop order and operand layout, as autodiff
/// writes the gradients of matmuls: dA = dC B^T (B stored N x K: trans_b),
/// dB = A^T dC (A stored K x M: trans_a), a product whose inputs come in the
/// order (B, A), one whose output is stored N x M (computed as C^T = B^T A^T),
/// the batched attention gradient, a named matmul with transposing maps, and
/// widening casts in the body.
// CHECK-LABEL: func.func @generic_forms
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[YES:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[B1:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[D16:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[D32:.*]] = arith.constant 32 : i64
// CHECK-DAG: %[[D64:.*]] = arith.constant 64 : i64
// dA[m, k] += dC[m, n] * B[k, n]: A = dC (M 16 x N 32 plays K), B = B^T.
// CHECK: call @recast_gemm(%[[NO]], %[[NO]], %[[NO]], %[[NO]], %[[YES]], %[[B1]], %[[D16]], %[[D64]], %[[D32]],
// dW[k, n] += x[m, k] * dY[m, n]: x^T (x stored K x M: trans_a), times dY.
// CHECK: call @recast_gemm(%[[NO]], %[[NO]], %[[NO]], %[[YES]], %[[NO]], %[[B1]], %[[D64]], %[[D32]], %[[D16]],
// Inputs in the order (B, A).
// CHECK: call @recast_gemm(%[[NO]], %[[NO]], %[[NO]], %[[NO]], %[[NO]], %[[B1]], %[[D16]], %[[D32]], %[[D64]],
// C stored N x M: C^T = B^T A^T, so M and N trade places.
// CHECK: call @recast_gemm(%[[NO]], %[[NO]], %[[NO]], %[[YES]], %[[YES]], %[[B1]], %[[D32]], %[[D16]], %[[D64]],
// Batched: dQ[b, i, d] += dS[b, i, j] * K[b, j, d] with K read as [b, d, j].
// CHECK: %[[B8:.*]] = arith.constant 8 : i64
// CHECK: call @recast_gemm(%[[NO]], %[[NO]], %[[NO]], %[[NO]], %[[YES]], %[[B8]], %[[D32]], %[[D16]], %[[D32]],
// A named matmul whose maps read A as K x M.
// CHECK: call @recast_gemm(%[[NO]], %[[NO]], %[[NO]], %[[YES]], %[[NO]], %[[B1]], %[[D16]], %[[D16]], %[[D16]],
// bf16 inputs widened in the body, f32 accumulator.
// CHECK: %[[BF16:.*]] = arith.constant 2 : i32
// CHECK: call @recast_gemm(%[[BF16]], %[[BF16]], %[[NO]], %[[NO]], %[[NO]], %[[B1]], %[[D16]], %[[D32]], %[[D64]],
// CHECK-NOT: linalg.
// CHECK: return
#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#nm = affine_map<(m, n, k) -> (n, m)>
// Autodiff's loop order for dA: (k, m, n) with n reduced.
#dA_dC = affine_map<(k, m, n) -> (m, n)>
#dA_B = affine_map<(k, m, n) -> (k, n)>
#dA_out = affine_map<(k, m, n) -> (m, k)>
// dW[k, n] += x[m, k] * dY[m, n], loops (k, n, m).
#dW_x = affine_map<(k, n, m) -> (m, k)>
#dW_dY = affine_map<(k, n, m) -> (m, n)>
#dW_out = affine_map<(k, n, m) -> (k, n)>
#bik = affine_map<(b, i, d, j) -> (b, i, j)>
#bdk = affine_map<(b, i, d, j) -> (b, d, j)>
#bid = affine_map<(b, i, d, j) -> (b, i, d)>
func.func @generic_forms(%dC: memref<16x32xf32>, %B: memref<64x32xf32>, %dA: memref<16x64xf32>,
                         %x: memref<16x64xf32>, %y: memref<64x32xf32>, %z: memref<16x32xf32>,
                         %zt: memref<32x16xf32>,
                         %dS: memref<8x32x32xf32>, %K: memref<8x16x32xf32>, %dQ: memref<8x32x16xf32>,
                         %s: memref<16x16xf32>, %t: memref<16x16xf32>,
                         %xb: memref<16x64xbf16>, %yb: memref<64x32xbf16>) {
  linalg.generic {indexing_maps = [#dA_dC, #dA_B, #dA_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dC, %B : memref<16x32xf32>, memref<64x32xf32>) outs(%dA : memref<16x64xf32>) {
  ^bb0(%g: f32, %b: f32, %acc: f32):
    %p = arith.mulf %g, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#dW_x, #dW_dY, #dW_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %z : memref<16x64xf32>, memref<16x32xf32>) outs(%y : memref<64x32xf32>) {
  ^bb0(%a: f32, %g: f32, %acc: f32):
    %p = arith.mulf %a, %g : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#kn, #mk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %x : memref<64x32xf32>, memref<16x64xf32>) outs(%z : memref<16x32xf32>) {
  ^bb0(%b: f32, %a: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #nm], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<16x64xf32>, memref<64x32xf32>) outs(%zt : memref<32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#bik, #bdk, #bid], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%dS, %K : memref<8x32x32xf32>, memref<8x16x32xf32>) outs(%dQ : memref<8x32x16xf32>) {
  ^bb0(%g: f32, %k: f32, %acc: f32):
    %p = arith.mulf %g, %k : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%s, %s : memref<16x16xf32>, memref<16x16xf32>) outs(%t : memref<16x16xf32>)
  // expected-remark @below {{contraction stays a loop nest: only f32 contractions are sent to the runtime here}}
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xb, %yb : memref<16x64xbf16>, memref<64x32xbf16>) outs(%z : memref<16x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

/// Reductions that compute something else than C += A * B stay loops, and
/// are not reported: a negated product, a product of a cast that rounds, a
/// sum, a third input, and a transposed FP8 A.
// CHECK-LABEL: func.func @not_products
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: call @recast_gemm
#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#row = affine_map<(m, k) -> (m, k)>
#red = affine_map<(m, k) -> (m)>
func.func @not_products(%x: memref<16x64xf32>, %y: memref<64x32xf32>, %z: memref<16x32xf32>,
                        %xd: memref<16x64xf64>, %s: memref<16xf32>,
                        %a8: memref<64x16xf8E4M3FN>, %b8: memref<64x32xf8E4M3FN>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<16x64xf32>, memref<64x32xf32>) outs(%z : memref<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %n = arith.negf %p : f32
    %r = arith.addf %acc, %n : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xd, %y : memref<16x64xf64>, memref<64x32xf32>) outs(%z : memref<16x32xf32>) {
  ^bb0(%a: f64, %b: f32, %acc: f32):
    %at = arith.truncf %a : f64 to f32
    %p = arith.mulf %at, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x64xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y, %z : memref<16x64xf32>, memref<64x32xf32>, memref<16x32xf32>) outs(%z : memref<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  // expected-remark @below {{contraction stays a loop nest: only f32 contractions are sent to the runtime here}}
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a8, %b8 : memref<64x16xf8E4M3FN>, memref<64x32xf8E4M3FN>) outs(%z : memref<16x32xf32>) {
  ^bb0(%a: f8E4M3FN, %b: f8E4M3FN, %acc: f32):
    %ae = arith.extf %a : f8E4M3FN to f32
    %be = arith.extf %b : f8E4M3FN to f32
    %p = arith.mulf %ae, %be : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

/// What stays a loop nest, and why.
// CHECK-LABEL: func.func @skipped
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: call @recast_gemm
func.func @skipped(%a: memref<16x16xf64>, %c: memref<16x16xf64>,
                   %v: memref<16x16xf32, strided<[32, 1]>>, %w: memref<16x16xf32>,
                   %h: memref<16x16xf16>, %x: memref<16x16xf32>) {
  // expected-remark @below {{contraction stays a loop nest: an element type has no runtime GEMM}}
  linalg.matmul ins(%a, %a : memref<16x16xf64>, memref<16x16xf64>) outs(%c : memref<16x16xf64>)
  // expected-remark @below {{contraction stays a loop nest: the result is not a statically shaped contiguous buffer}}
  linalg.matmul ins(%w, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%v : memref<16x16xf32, strided<[32, 1]>>)
  // expected-remark @below {{contraction stays a loop nest: A and B have different element types}}
  linalg.matmul ins(%h, %w : memref<16x16xf16>, memref<16x16xf32>) outs(%x : memref<16x16xf32>)
  return
}

// -----

/// An input that is a strided view (a channel slice of a gradient) is read
/// from a contiguous copy made before the call and freed after it.
// CHECK-LABEL: func.func @mm_strided_input
// CHECK: %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK: memref.copy %arg0, %[[COPY]] : memref<16x16xf32, strided<[32, 1]>> to memref<16x16xf32>
// CHECK: memref.extract_strided_metadata %[[COPY]]
// CHECK: call @recast_gemm(
// CHECK: memref.dealloc %[[COPY]] : memref<16x16xf32>
// CHECK-NOT: linalg.matmul
// ONLYF32-LABEL: func.func @mm_strided_input
// ONLYF32: call @recast_gemm
func.func @mm_strided_input(%v: memref<16x16xf32, strided<[32, 1]>>, %w: memref<16x16xf32>, %c: memref<16x16xf32>) {
  linalg.matmul ins(%v, %w : memref<16x16xf32, strided<[32, 1]>>, memref<16x16xf32>) outs(%c : memref<16x16xf32>)
  return
}

// -----

/// A zero fill of the whole of C right before the product (past ops that
/// touch no memory, or only allocate and free other buffers) is the call's
/// job: the fill goes and the call overwrites C (last argument 1).
// CHECK-LABEL: func.func @mm_after_zero_fill
// CHECK-DAG: %[[OVERWRITE:.*]] = arith.constant 1 : i32
// CHECK-NOT: linalg.fill
// CHECK: call @recast_gemm({{.*}}, %[[OVERWRITE]]) :
func.func @mm_after_zero_fill(%a: memref<8x16xf32>, %b: memref<16x4xf32>) -> memref<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  %other = memref.alloc() : memref<2xf32>
  memref.dealloc %other : memref<2xf32>
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return %c : memref<8x4xf32>
}

// -----

/// The fill stays, and the call accumulates, when: the fill's value is not
/// +0.0; something reads or writes memory between the fill and the product;
/// the product writes only a slice of the filled buffer.
// CHECK-LABEL: func.func @fills_kept
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<8x4xf32>)
// CHECK: %[[ACCUMULATE:.*]] = arith.constant 0 : i32
// CHECK: call @recast_gemm({{.*}}, %[[ACCUMULATE]]) :
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<8x4xf32>)
// CHECK: memref.store
// CHECK: call @recast_gemm({{.*}}, %[[ACCUMULATE]]) :
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<2x8x4xf32>)
// CHECK: call @recast_gemm({{.*}}, %[[ACCUMULATE]]) :
func.func @fills_kept(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %seen: memref<f32>)
    -> (memref<8x4xf32>, memref<8x4xf32>, memref<2x8x4xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %c1 = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%one : f32) outs(%c1 : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c1 : memref<8x4xf32>)
  %c2 = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<8x4xf32>)
  memref.store %zero, %seen[] : memref<f32>
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c2 : memref<8x4xf32>)
  %c3 = memref.alloc() : memref<2x8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c3 : memref<2x8x4xf32>)
  %half = memref.subview %c3[1, 0, 0] [1, 8, 4] [1, 1, 1] : memref<2x8x4xf32> to memref<8x4xf32, strided<[4, 1], offset: 32>>
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%half : memref<8x4xf32, strided<[4, 1], offset: 32>>)
  return %c1, %c2, %c3 : memref<8x4xf32>, memref<8x4xf32>, memref<2x8x4xf32>
}
