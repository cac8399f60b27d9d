// RUN: recast-opt %S/../../../Execution/Autodiff/softmax.mlir -recast-autodiff | FileCheck %s

// Softmax and log-softmax get the gradient PyTorch gives them, from the
// output y alone: a group sum, then one elementwise op. Neither the max's
// gradient (a compare with the maximum) nor the exponentials of the forward
// are recomputed. The inputs (and their gradient check) are in
// test/Execution/Autodiff/softmax.mlir.

// torch-mlir's five generics: dx = y * (dy - sum(dy * y)).
// CHECK-LABEL: func.func @grad_softmax_torch
// CHECK: arith.divf
// CHECK: math.sin
// CHECK: math.cos
// CHECK-NOT: math.exp
// CHECK-NOT: cmpf oeq
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-NEXT: ^bb0(%[[DY:.*]]: f64, %[[Y:.*]]: f64, %[[ACC:.*]]: f64):
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[DY]], %[[Y]]
// CHECK-NEXT: arith.addf %[[ACC]], %[[T]]
// CHECK: ^bb0(%[[DY2:.*]]: f64, %[[Y2:.*]]: f64, %[[S:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[DY2]], %[[S]]
// CHECK-NEXT: arith.mulf %[[Y2]], %[[D]]
// CHECK-NOT: math.exp
// CHECK: return

// torch-mlir's log-softmax (log on the keepdim sum): dx = dy - exp(y) * sum(dy).
// CHECK-LABEL: func.func @grad_log_softmax_torch
// CHECK: math.log
// CHECK: math.cos
// CHECK-NOT: cmpf oeq
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-NEXT: ^bb0(%[[LDY:.*]]: f64, %[[LACC:.*]]: f64):
// CHECK-NEXT: arith.addf %[[LACC]], %[[LDY]]
// CHECK: ^bb0(%[[LDY2:.*]]: f64, %[[LY:.*]]: f64, %[[LS:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: %[[P:.*]] = math.exp %[[LY]]
// CHECK-NEXT: %[[PS:.*]] = arith.mulf %[[P]], %[[LS]]
// CHECK-NEXT: arith.subf %[[LDY2]], %[[PS]]
// CHECK-NOT: cmpf oeq
// CHECK: return

// The zoo's form: log and subtraction fused in one generic.
// CHECK-LABEL: func.func @grad_log_softmax_fused
// CHECK: math.cos
// CHECK-NOT: cmpf oeq
// CHECK: math.exp
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.subf
// CHECK-NOT: cmpf oeq
// CHECK: return

// Not a softmax (the sum is of exp(x), not exp(x - max)): op by op, the
// max's gradient included.
// CHECK-LABEL: func.func @grad_not_softmax
// CHECK: math.cos
// CHECK: cmpf oeq
// CHECK: return
