// A loss in the form torch-mlir's FX importer writes it (linalg-on-tensors):
// log_softmax with keepdim reductions and broadcasts (indexing maps with
// constant results), then mse_loss with x**2 as math.fpowi. The function is
// public and named @loss, its parameter marked {recast.param}.
#id = affine_map<(d0, d1) -> (d0, d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
#all = affine_map<(d0, d1) -> ()>
module {
  func.func @loss(%w: tensor<4x3xf32> {recast.param}, %x: tensor<5x4xf32>, %t: tensor<5x3xf32>) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %n = arith.constant 15.0 : f32
    %two = arith.constant 2 : i32
    %e53 = tensor.empty() : tensor<5x3xf32>
    %z53 = linalg.fill ins(%zero : f32) outs(%e53 : tensor<5x3xf32>) -> tensor<5x3xf32>
    %z = linalg.matmul ins(%x, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z53 : tensor<5x3xf32>) -> tensor<5x3xf32>
    %e51 = tensor.empty() : tensor<5x1xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e51 : tensor<5x1xf32>) -> tensor<5x1xf32>
    %max = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]} ins(%z : tensor<5x3xf32>) outs(%m0 : tensor<5x1xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.maximumf %a, %acc : f32
      linalg.yield %r : f32
    } -> tensor<5x1xf32>
    %shifted = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]} ins(%z, %max : tensor<5x3xf32>, tensor<5x1xf32>) outs(%e53 : tensor<5x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<5x3xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e51 : tensor<5x1xf32>) -> tensor<5x1xf32>
    %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]} ins(%shifted : tensor<5x3xf32>) outs(%s0 : tensor<5x1xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %ex = math.exp %a : f32
      %r = arith.addf %ex, %acc : f32
      linalg.yield %r : f32
    } -> tensor<5x1xf32>
    %ls = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]} ins(%shifted, %sum : tensor<5x3xf32>, tensor<5x1xf32>) outs(%e53 : tensor<5x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %lg = math.log %b : f32
      %r = arith.subf %a, %lg : f32
      linalg.yield %r : f32
    } -> tensor<5x3xf32>
    %sq = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%ls, %t : tensor<5x3xf32>, tensor<5x3xf32>) outs(%e53 : tensor<5x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %p = math.fpowi %d, %two : f32, i32
      linalg.yield %p : f32
    } -> tensor<5x3xf32>
    %e0 = tensor.empty() : tensor<f32>
    %l0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %total = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]} ins(%sq : tensor<5x3xf32>) outs(%l0 : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %mean = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%total : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.divf %a, %n : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %mean : tensor<f32>
  }
}
