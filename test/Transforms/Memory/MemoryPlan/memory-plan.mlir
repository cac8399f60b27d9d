// RUN: recast-opt %s -recast-memory-plan="report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
/// The planned step still runs and computes the same values.
// RUN: recast-opt %s -recast-memory-plan -recast-outline-kernels -convert-linalg-to-loops -convert-scf-to-cf -expand-strided-metadata -finalize-memref-to-llvm -convert-arith-to-llvm -convert-math-to-llvm -convert-func-to-llvm -convert-cf-to-llvm -reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=EXEC

/// %a and %c are never alive together: they share offset 0; %b lives across
/// both and goes next to them. The returned buffer keeps its own alloc (it
/// outlives the call); the report counts it in the step's footprint.
// CHECK-LABEL: func.func @chain
// CHECK:      %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// CHECK:      arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<512xi8> to memref<64xf32>
// CHECK:      arith.constant 256 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<512xi8> to memref<64xf32>
// CHECK:      arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<512xi8> to memref<64xf32>
// CHECK:      %[[OUT:.*]] = memref.alloc() : memref<64xf32>
// CHECK-NOT:  memref.dealloc %[[A]]
// CHECK:      memref.dealloc %[[ARENA]]
// CHECK-NEXT: return %[[OUT]]

// REPORT:      "functions": [
// REPORT:      "function": "chain",
// REPORT-NEXT: "arena_bytes": 512,
// REPORT-NEXT: "liveness_peak_bytes": 512,
// REPORT-NEXT: "fragmentation": 0,
// REPORT-NEXT: "planned_buffers": 3,
// REPORT-NEXT: "unplanned_buffers": 1,
// REPORT-NEXT: "returned_buffers": 1,
// REPORT-NEXT: "returned_bytes": 256,
// REPORT-NEXT: "footprint_bytes": 768
// REPORT:      "function": "main",

// EXEC: [-2.65229]
func.func @chain(%x: memref<64xf32>) -> memref<64xf32> {
  %a = memref.alloc() : memref<64xf32>
  linalg.exp ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  %b = memref.alloc() : memref<64xf32>
  linalg.negf ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  memref.dealloc %a : memref<64xf32>
  %c = memref.alloc() : memref<64xf32>
  linalg.exp ins(%b : memref<64xf32>) outs(%c : memref<64xf32>)
  %out = memref.alloc() : memref<64xf32>
  linalg.add ins(%c, %b : memref<64xf32>, memref<64xf32>) outs(%out : memref<64xf32>)
  memref.dealloc %c : memref<64xf32>
  memref.dealloc %b : memref<64xf32>
  return %out : memref<64xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() : memref<64xf32>
  linalg.fill ins(%one : f32) outs(%x : memref<64xf32>)
  %r = call @chain(%x) : (memref<64xf32>) -> memref<64xf32>
  %s = memref.subview %r[0] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1]>>
  %u = memref.cast %s : memref<1xf32, strided<[1]>> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %r : memref<64xf32>
  memref.dealloc %x : memref<64xf32>
  return
}
