// loss(w, b; x, y) = mean over rows and outputs of (x @ w + b - y)^2: the
// loss function --recast-train-step turns into training steps.
func.func @loss(%w: tensor<4x2xf32> {recast.param}, %b: tensor<2xf32> {recast.param},
                %x: tensor<8x4xf32>, %y: tensor<8x2xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                        affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%xw, %b, %y : tensor<8x2xf32>, tensor<2xf32>, tensor<8x2xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%p: f32, %bias: f32, %t: f32, %acc: f32):
    %s = arith.addf %p, %bias : f32
    %d = arith.subf %s, %t : f32
    %sq = arith.mulf %d, %d : f32
    %n = arith.constant 0.0625 : f32
    %w16 = arith.mulf %sq, %n : f32
    %r = arith.addf %acc, %w16 : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
