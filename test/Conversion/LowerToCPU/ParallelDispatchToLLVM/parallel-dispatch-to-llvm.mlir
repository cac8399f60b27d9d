// RUN: recast-opt %s --split-input-file --verify-diagnostics --recast-parallel-dispatch-to-llvm | FileCheck %s

// A task over iterations [begin, end) that takes a pointer and a float: the
// dispatch stores both into a context on its stack and hands the runtime
// ceil(10 / 4) = 3 blocks of a block function, which reads them back and
// runs the task on [4 b, min(4 b + 4, 10)).

// CHECK-LABEL: llvm.func @kernel_task0
// CHECK-LABEL: llvm.func internal @kernel_task0_block
// CHECK-SAME:    (%[[CTX:.*]]: !llvm.ptr, %[[B:.*]]: i64)
// CHECK:         %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK:         %[[BEGIN:.*]] = llvm.mul %[[B]], %[[FOUR]]
// CHECK:         %[[TEN:.*]] = llvm.mlir.constant(10 : i64) : i64
// CHECK:         %[[NEXT:.*]] = llvm.add %[[BEGIN]], %{{.*}}
// CHECK:         %[[END:.*]] = llvm.intr.smin(%[[NEXT]], %[[TEN]])
// CHECK:         %[[P:.*]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK:         %[[PV:.*]] = llvm.load %[[P]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK:         %[[SV:.*]] = llvm.load %[[S]] : !llvm.ptr -> f32
// CHECK:         llvm.call @kernel_task0(%[[BEGIN]], %[[END]], %[[PV]], %[[SV]])
// CHECK-LABEL: llvm.func internal @kernel_dispatch0
// CHECK-SAME:    (%[[ARG0:.*]]: !llvm.ptr, %[[ARG1:.*]]: f32)
// CHECK-NOT:     recast_parallel
// CHECK:         %[[FRAME:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, f32)>
// CHECK:         llvm.store %[[ARG0]], %{{.*}}
// CHECK:         llvm.store %[[ARG1]], %{{.*}}
// CHECK:         %[[FN:.*]] = llvm.mlir.addressof @kernel_task0_block
// CHECK:         %[[BLOCKS:.*]] = llvm.mlir.constant(3 : i64)
// CHECK:         llvm.call @recast_parallel_for(%[[FN]], %[[FRAME]], %[[BLOCKS]])
// CHECK:       llvm.func @recast_parallel_for(!llvm.ptr, !llvm.ptr, i64)
llvm.func @kernel_task0(%begin: i64, %end: i64, %p: !llvm.ptr, %s: f32) {
  llvm.return
}
llvm.func @kernel_dispatch0(!llvm.ptr, f32) attributes {recast_parallel_block = 4 : i64, recast_parallel_iterations = 10 : i64, recast_parallel_task = @kernel_task0}
llvm.func @kernel(%p: !llvm.ptr, %s: f32) {
  llvm.call @kernel_dispatch0(%p, %s) : (!llvm.ptr, f32) -> ()
  llvm.return
}

// -----

// expected-error @+1 {{a parallel dispatch needs a task function, its iterations and a positive block size}}
llvm.func @no_task_dispatch(!llvm.ptr) attributes {recast_parallel_block = 4 : i64, recast_parallel_iterations = 10 : i64, recast_parallel_task = @missing}

// -----

llvm.func @task(%begin: i64, %p: !llvm.ptr) {
  llvm.return
}
// expected-error @+1 {{the task @task does not take (begin, end) and the dispatch's arguments}}
llvm.func @mismatched_dispatch(!llvm.ptr) attributes {recast_parallel_block = 4 : i64, recast_parallel_iterations = 10 : i64, recast_parallel_task = @task}
