// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls -cse | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls=only-f32 | FileCheck %s --check-prefix=ONLYF32
// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls="only-f32 report-skipped" -verify-diagnostics -o /dev/null

/// Buffer matmuls become calls to the runtime's GEMM: element type codes
/// (f32 0, f16 1, bf16 2, E4M3 3, E5M2 4), batch, M, N, K, and the addresses
/// of the first elements (the buffer's aligned pointer plus its offset).

// CHECK-LABEL: func.func private @recast_gemm(i32, i32, i32, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr)
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
// CHECK: call @recast_gemm(%[[F32]], %[[F32]], %[[F32]], %[[ONE]], %[[M]], %[[N]], %[[K]], %[[A]], %{{.*}}, %{{.*}})
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
// CHECK: call @recast_gemm(%[[BF16]], %[[BF16]], %[[F32]],
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
// CHECK: call @recast_gemm(%[[E4M3]], %[[E5M2]], %[[BF16]], %[[B8]], %[[M32]], %[[M32]], %[[K16]],
func.func @bmm_fp8(%a: memref<8x32x16xf8E4M3FN>, %b: memref<8x16x32xf8E5M2>, %c: memref<8x32x32xbf16>) {
  // expected-remark @below {{contraction stays a loop nest: only f32 contractions are sent to the runtime here}}
  linalg.batch_matmul ins(%a, %b : memref<8x32x16xf8E4M3FN>, memref<8x16x32xf8E5M2>) outs(%c : memref<8x32x32xbf16>)
  return
}

// -----

/// What stays a loop nest, and why.
// CHECK-LABEL: func.func @skipped
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT: call @recast_gemm
#mA = affine_map<(m, n, k) -> (k, m)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @skipped(%a: memref<16x16xf64>, %c: memref<16x16xf64>,
                   %v: memref<16x16xf32, strided<[32, 1]>>, %w: memref<16x16xf32>,
                   %h: memref<16x16xf16>, %x: memref<16x16xf32>) {
  // expected-remark @below {{contraction stays a loop nest: an element type has no runtime GEMM}}
  linalg.matmul ins(%a, %a : memref<16x16xf64>, memref<16x16xf64>) outs(%c : memref<16x16xf64>)
  // expected-remark @below {{contraction stays a loop nest: an operand is not a statically shaped contiguous buffer}}
  linalg.matmul ins(%v, %w : memref<16x16xf32, strided<[32, 1]>>, memref<16x16xf32>) outs(%w : memref<16x16xf32>)
  // expected-remark @below {{contraction stays a loop nest: it has user-defined indexing maps}}
  linalg.matmul indexing_maps = [#mA, #mB, #mC] ins(%w, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%x : memref<16x16xf32>)
  // expected-remark @below {{contraction stays a loop nest: A and B have different element types}}
  linalg.matmul ins(%h, %w : memref<16x16xf16>, memref<16x16xf32>) outs(%x : memref<16x16xf32>)
  return
}
