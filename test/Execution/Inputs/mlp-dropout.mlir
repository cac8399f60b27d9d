// A 32-256-10 MLP with batch 256 (mlp-small's layers, narrower input, larger
// batch, so that activations rather than parameters set the peak) and
// dropout (rate 0.25) on the hidden layer. The mask comes from
// recast.dropout: Philox of (seed 1234, a step counter kept as state, the
// element's index), so it changes from step to step, and evaluating the op
// again (remat, the backward) gives the same mask. Used by
// test/Execution/remat-dropout.py.

#map2_01 = affine_map<(d0, d1) -> (d0, d1)>
#map2_1 = affine_map<(d0, d1) -> (d1)>
#map2_0 = affine_map<(d0, d1) -> (d0)>
#map1_0 = affine_map<(d0) -> (d0)>
#map1_ = affine_map<(d0) -> ()>
#map0_ = affine_map<() -> ()>

module {
  func.func private @loss(%w1: tensor<32x256xf32>,
                          %b1: tensor<256xf32>,
                          %w2: tensor<256x10xf32>,
                          %b2: tensor<10xf32>,
                          %x: tensor<256x32xf32>,
                          %y: tensor<256x10xf32>,
                          %step: tensor<i64>)
      -> tensor<f32> {
    %seed = arith.constant dense<1234> : tensor<i64>
    %zero = arith.constant 0.0 : f32
    %fc1_mm_empty = tensor.empty() : tensor<256x256xf32>
    %fc1_mm_init = linalg.fill ins(%zero : f32) outs(%fc1_mm_empty : tensor<256x256xf32>) -> tensor<256x256xf32>
    %fc1_mm = linalg.matmul ins(%x, %w1 : tensor<256x32xf32>, tensor<32x256xf32>) outs(%fc1_mm_init : tensor<256x256xf32>) -> tensor<256x256xf32>
    %fc1_empty = tensor.empty() : tensor<256x256xf32>
    %fc1 = linalg.generic {indexing_maps = [#map2_01, #map2_1, #map2_01], iterator_types = ["parallel", "parallel"]}
        ins(%fc1_mm, %b1 : tensor<256x256xf32>, tensor<256xf32>) outs(%fc1_empty : tensor<256x256xf32>) {
    ^bb0(%x0: f32, %x1: f32, %out: f32):
      %add = arith.addf %x0, %x1 : f32
      linalg.yield %add : f32
    } -> tensor<256x256xf32>
    %h1_empty = tensor.empty() : tensor<256x256xf32>
    %h1 = linalg.generic {indexing_maps = [#map2_01, #map2_01], iterator_types = ["parallel", "parallel"]}
        ins(%fc1 : tensor<256x256xf32>) outs(%h1_empty : tensor<256x256xf32>) {
    ^bb0(%x0: f32, %out: f32):
      %c = arith.constant 0.0 : f32
      %cmp = arith.cmpf ogt, %x0, %c : f32
      %sel = arith.select %cmp, %x0, %c : f32
      linalg.yield %sel : f32
    } -> tensor<256x256xf32>
    %h1_drop = recast.dropout %h1, %seed, %step {rate = 0.25 : f64} : tensor<256x256xf32>
    %logits_mm_empty = tensor.empty() : tensor<256x10xf32>
    %logits_mm_init = linalg.fill ins(%zero : f32) outs(%logits_mm_empty : tensor<256x10xf32>) -> tensor<256x10xf32>
    %logits_mm = linalg.matmul ins(%h1_drop, %w2 : tensor<256x256xf32>, tensor<256x10xf32>) outs(%logits_mm_init : tensor<256x10xf32>) -> tensor<256x10xf32>
    %logits_empty = tensor.empty() : tensor<256x10xf32>
    %logits = linalg.generic {indexing_maps = [#map2_01, #map2_1, #map2_01], iterator_types = ["parallel", "parallel"]}
        ins(%logits_mm, %b2 : tensor<256x10xf32>, tensor<10xf32>) outs(%logits_empty : tensor<256x10xf32>) {
    ^bb0(%x0: f32, %x1: f32, %out: f32):
      %add = arith.addf %x0, %x1 : f32
      linalg.yield %add : f32
    } -> tensor<256x10xf32>
    %lowest = arith.constant -3.4028234663852886e+38 : f32
    %loss_max_empty = tensor.empty() : tensor<256xf32>
    %loss_max_init = linalg.fill ins(%lowest : f32) outs(%loss_max_empty : tensor<256xf32>) -> tensor<256xf32>
    %loss_max = linalg.generic {indexing_maps = [#map2_01, #map2_0], iterator_types = ["parallel", "reduction"]}
        ins(%logits : tensor<256x10xf32>) outs(%loss_max_init : tensor<256xf32>) {
    ^bb0(%x0: f32, %acc: f32):
      %max = arith.maximumf %x0, %acc : f32
      linalg.yield %max : f32
    } -> tensor<256xf32>
    %loss_shifted_empty = tensor.empty() : tensor<256x10xf32>
    %loss_shifted = linalg.generic {indexing_maps = [#map2_01, #map2_0, #map2_01], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %loss_max : tensor<256x10xf32>, tensor<256xf32>) outs(%loss_shifted_empty : tensor<256x10xf32>) {
    ^bb0(%x0: f32, %x1: f32, %out: f32):
      %sub = arith.subf %x0, %x1 : f32
      linalg.yield %sub : f32
    } -> tensor<256x10xf32>
    %loss_sumexp_empty = tensor.empty() : tensor<256xf32>
    %loss_sumexp_init = linalg.fill ins(%zero : f32) outs(%loss_sumexp_empty : tensor<256xf32>) -> tensor<256xf32>
    %loss_sumexp = linalg.generic {indexing_maps = [#map2_01, #map2_0], iterator_types = ["parallel", "reduction"]}
        ins(%loss_shifted : tensor<256x10xf32>) outs(%loss_sumexp_init : tensor<256xf32>) {
    ^bb0(%x0: f32, %acc: f32):
      %exp = math.exp %x0 : f32
      %add = arith.addf %acc, %exp : f32
      linalg.yield %add : f32
    } -> tensor<256xf32>
    %loss_picked_empty = tensor.empty() : tensor<256xf32>
    %loss_picked_init = linalg.fill ins(%zero : f32) outs(%loss_picked_empty : tensor<256xf32>) -> tensor<256xf32>
    %loss_picked = linalg.generic {indexing_maps = [#map2_01, #map2_01, #map2_0], iterator_types = ["parallel", "reduction"]}
        ins(%y, %loss_shifted : tensor<256x10xf32>, tensor<256x10xf32>) outs(%loss_picked_init : tensor<256xf32>) {
    ^bb0(%x0: f32, %x1: f32, %acc: f32):
      %mul = arith.mulf %x0, %x1 : f32
      %add = arith.addf %acc, %mul : f32
      linalg.yield %add : f32
    } -> tensor<256xf32>
    %loss_total_empty = tensor.empty() : tensor<f32>
    %loss_total_init = linalg.fill ins(%zero : f32) outs(%loss_total_empty : tensor<f32>) -> tensor<f32>
    %loss_total = linalg.generic {indexing_maps = [#map1_0, #map1_0, #map1_], iterator_types = ["reduction"]}
        ins(%loss_sumexp, %loss_picked : tensor<256xf32>, tensor<256xf32>) outs(%loss_total_init : tensor<f32>) {
    ^bb0(%x0: f32, %x1: f32, %acc: f32):
      %log = math.log %x0 : f32
      %sub = arith.subf %log, %x1 : f32
      %add = arith.addf %acc, %sub : f32
      linalg.yield %add : f32
    } -> tensor<f32>
    %loss_empty = tensor.empty() : tensor<f32>
    %loss = linalg.generic {indexing_maps = [#map0_, #map0_], iterator_types = []}
        ins(%loss_total : tensor<f32>) outs(%loss_empty : tensor<f32>) {
    ^bb0(%x0: f32, %out: f32):
      %c = arith.constant 0.00390625 : f32
      %mul = arith.mulf %x0, %c : f32
      linalg.yield %mul : f32
    } -> tensor<f32>
    return %loss
        : tensor<f32>
  }

  func.func @train_step(%w1: tensor<32x256xf32> {recast.param},
                        %b1: tensor<256xf32> {recast.param},
                        %w2: tensor<256x10xf32> {recast.param},
                        %b2: tensor<10xf32> {recast.param},
                        %x: tensor<256x32xf32>,
                        %y: tensor<256x10xf32> {recast.init = "onehot"},
                        %step: tensor<i64> {recast.state})
      -> (tensor<f32>, tensor<32x256xf32>, tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>, tensor<i64>) {

    // Loss and gradients of @loss with respect to every parameter.
    %loss, %w1_grad, %b1_grad, %w2_grad, %b2_grad = recast.value_and_grad @loss(
        %w1, %b1, %w2, %b2, %x, %y, %step)
        {wrt = array<i64: 0, 1, 2, 3>}
        : (tensor<32x256xf32>, tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>, tensor<256x32xf32>,
           tensor<256x10xf32>, tensor<i64>)
        -> (tensor<f32>, tensor<32x256xf32>, tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>)

    // SGD: p_new = p - 0.1 * grad.
    %w1_new_empty = tensor.empty() : tensor<32x256xf32>
    %w1_new = linalg.generic {indexing_maps = [#map2_01, #map2_01, #map2_01], iterator_types = ["parallel", "parallel"]}
        ins(%w1, %w1_grad : tensor<32x256xf32>, tensor<32x256xf32>) outs(%w1_new_empty : tensor<32x256xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %c = arith.constant 0.1 : f32
      %mul = arith.mulf %g, %c : f32
      %sub = arith.subf %p, %mul : f32
      linalg.yield %sub : f32
    } -> tensor<32x256xf32>
    %b1_new_empty = tensor.empty() : tensor<256xf32>
    %b1_new = linalg.generic {indexing_maps = [#map1_0, #map1_0, #map1_0], iterator_types = ["parallel"]}
        ins(%b1, %b1_grad : tensor<256xf32>, tensor<256xf32>) outs(%b1_new_empty : tensor<256xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %c = arith.constant 0.1 : f32
      %mul = arith.mulf %g, %c : f32
      %sub = arith.subf %p, %mul : f32
      linalg.yield %sub : f32
    } -> tensor<256xf32>
    %w2_new_empty = tensor.empty() : tensor<256x10xf32>
    %w2_new = linalg.generic {indexing_maps = [#map2_01, #map2_01, #map2_01], iterator_types = ["parallel", "parallel"]}
        ins(%w2, %w2_grad : tensor<256x10xf32>, tensor<256x10xf32>) outs(%w2_new_empty : tensor<256x10xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %c = arith.constant 0.1 : f32
      %mul = arith.mulf %g, %c : f32
      %sub = arith.subf %p, %mul : f32
      linalg.yield %sub : f32
    } -> tensor<256x10xf32>
    %b2_new_empty = tensor.empty() : tensor<10xf32>
    %b2_new = linalg.generic {indexing_maps = [#map1_0, #map1_0, #map1_0], iterator_types = ["parallel"]}
        ins(%b2, %b2_grad : tensor<10xf32>, tensor<10xf32>) outs(%b2_new_empty : tensor<10xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %c = arith.constant 0.1 : f32
      %mul = arith.mulf %g, %c : f32
      %sub = arith.subf %p, %mul : f32
      linalg.yield %sub : f32
    } -> tensor<10xf32>
    // The next step draws a new mask.
    %step_new_empty = tensor.empty() : tensor<i64>
    %step_new = linalg.generic {indexing_maps = [#map0_, #map0_], iterator_types = []}
        ins(%step : tensor<i64>) outs(%step_new_empty : tensor<i64>) {
    ^bb0(%s: i64, %out: i64):
      %one = arith.constant 1 : i64
      %next = arith.addi %s, %one : i64
      linalg.yield %next : i64
    } -> tensor<i64>
    return %loss, %w1_new, %b1_new, %w2_new, %b2_new, %step_new
        : tensor<f32>, tensor<32x256xf32>, tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>, tensor<i64>
  }
}
