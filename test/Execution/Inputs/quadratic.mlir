// A training step small enough to follow by hand: loss = mean((p - x)^2),
// SGD with momentum 0.9 and learning rate 0.1 on the parameter p, with the
// momentum buffer m as optimizer state.
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @train_step(%p: tensor<4xf32> {recast.param}, %m: tensor<4xf32> {recast.state},
                      %x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %quarter = arith.constant 0.25 : f32
  %half = arith.constant 0.5 : f32
  %mu = arith.constant 0.9 : f32
  %lr = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<4xf32>
  %d = linalg.sub ins(%p, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%d : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.mulf %sq, %quarter : f32
    %r = arith.addf %acc, %s : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %newm, %newp = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%d, %m, %p : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e1, %e2 : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%di: f32, %mi: f32, %pi: f32, %o1: f32, %o2: f32):
    %g = arith.mulf %di, %half : f32
    %mm = arith.mulf %mi, %mu : f32
    %m2 = arith.addf %mm, %g : f32
    %step = arith.mulf %m2, %lr : f32
    %p2 = arith.subf %pi, %step : f32
    linalg.yield %m2, %p2 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %loss, %newp, %newm : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
