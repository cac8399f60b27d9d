// One SGD training step of a 2-layer MLP classifier (784-256-10, batch 64),
// written by hand in linalg on tensors with upstream dialects only.
//
//   h      = relu(x @ w1 + b1)
//   logits = h @ w2 + b2
//   loss   = mean_r( logsumexp(logits[r]) - logits[r, label_r] )
//   p      = p - 0.1 * dloss/dp            for p in (w1, b1, w2, b2)
//
// Calling convention (recast-run): arguments marked {recast.param} are the
// trainable parameters; the results are the loss followed by one new value per
// parameter, in argument order, and recast-run feeds them back at the next step.
// `y` holds one-hot labels, so its synthetic initializer is "onehot".
//
// Each op gets its own init tensor (tensor.empty, or a linalg.fill of it for
// accumulators) right before it, so no init value stays live longer than the
// op that consumes it.

#id2 = affine_map<(r, c) -> (r, c)>
#row = affine_map<(r, c) -> (r)>
#col = affine_map<(r, c) -> (c)>
#id1 = affine_map<(i) -> (i)>
#to_scalar = affine_map<(i) -> ()>
#scalar = affine_map<() -> ()>

module {
  func.func @train_step(%w1: tensor<784x256xf32> {recast.param}, %b1: tensor<256xf32> {recast.param},
                        %w2: tensor<256x10xf32> {recast.param}, %b2: tensor<10xf32> {recast.param},
                        %x: tensor<64x784xf32>, %y: tensor<64x10xf32> {recast.init = "onehot"})
      -> (tensor<f32>, tensor<784x256xf32>, tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>) {
    %zero = arith.constant 0.0 : f32
    %neg_inf = arith.constant 0xFF800000 : f32
    // 1/64 for the mean over the batch: a power of two, so scaling by it is exact.
    %inv_batch = arith.constant 0.015625 : f32
    %lr = arith.constant 0.1 : f32

    // ---------------------------------------------------------------- forward
    // Hidden layer: h = relu(x @ w1 + b1).
    %xw1_empty = tensor.empty() : tensor<64x256xf32>
    %xw1_init = linalg.fill ins(%zero : f32) outs(%xw1_empty : tensor<64x256xf32>) -> tensor<64x256xf32>
    %xw1 = linalg.matmul ins(%x, %w1 : tensor<64x784xf32>, tensor<784x256xf32>)
                         outs(%xw1_init : tensor<64x256xf32>) -> tensor<64x256xf32>
    %h_empty = tensor.empty() : tensor<64x256xf32>
    %h = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%xw1, %b1 : tensor<64x256xf32>, tensor<256xf32>) outs(%h_empty : tensor<64x256xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %pre = arith.addf %a, %b : f32
      %act = arith.maximumf %pre, %zero : f32
      linalg.yield %act : f32
    } -> tensor<64x256xf32>

    // Output layer: logits = h @ w2 + b2.
    %hw2_empty = tensor.empty() : tensor<64x10xf32>
    %hw2_init = linalg.fill ins(%zero : f32) outs(%hw2_empty : tensor<64x10xf32>) -> tensor<64x10xf32>
    %hw2 = linalg.matmul ins(%h, %w2 : tensor<64x256xf32>, tensor<256x10xf32>)
                         outs(%hw2_init : tensor<64x10xf32>) -> tensor<64x10xf32>
    %logits_empty = tensor.empty() : tensor<64x10xf32>
    %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%hw2, %b2 : tensor<64x10xf32>, tensor<10xf32>) outs(%logits_empty : tensor<64x10xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %sum = arith.addf %a, %b : f32
      linalg.yield %sum : f32
    } -> tensor<64x10xf32>

    // ------------------------------------------------------------------- loss
    // Softmax cross-entropy, stabilised by subtracting each row's maximum:
    // with s = logits - rowmax, loss_r = log(sum_c exp(s[r, c])) - sum_c y[r, c] * s[r, c].
    %rowmax_empty = tensor.empty() : tensor<64xf32>
    %rowmax_init = linalg.fill ins(%neg_inf : f32) outs(%rowmax_empty : tensor<64xf32>) -> tensor<64xf32>
    %rowmax = linalg.reduce ins(%logits : tensor<64x10xf32>) outs(%rowmax_init : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %m = arith.maximumf %in, %acc : f32
        linalg.yield %m : f32
      }
    %shifted_empty = tensor.empty() : tensor<64x10xf32>
    %shifted = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %rowmax : tensor<64x10xf32>, tensor<64xf32>) outs(%shifted_empty : tensor<64x10xf32>) {
    ^bb0(%l: f32, %m: f32, %out: f32):
      %s = arith.subf %l, %m : f32
      linalg.yield %s : f32
    } -> tensor<64x10xf32>
    %exp_empty = tensor.empty() : tensor<64x10xf32>
    %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%shifted : tensor<64x10xf32>) outs(%exp_empty : tensor<64x10xf32>) {
    ^bb0(%s: f32, %out: f32):
      %e = math.exp %s : f32
      linalg.yield %e : f32
    } -> tensor<64x10xf32>
    %sumexp_empty = tensor.empty() : tensor<64xf32>
    %sumexp_init = linalg.fill ins(%zero : f32) outs(%sumexp_empty : tensor<64xf32>) -> tensor<64xf32>
    %sumexp = linalg.reduce ins(%exp : tensor<64x10xf32>) outs(%sumexp_init : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    // Per-row sum_c y * s: the shifted logit of the true class for one-hot y.
    %label_logit_empty = tensor.empty() : tensor<64xf32>
    %label_logit_init = linalg.fill ins(%zero : f32) outs(%label_logit_empty : tensor<64xf32>) -> tensor<64xf32>
    %label_logit = linalg.generic {indexing_maps = [#id2, #id2, #row], iterator_types = ["parallel", "reduction"]}
        ins(%y, %shifted : tensor<64x10xf32>, tensor<64x10xf32>) outs(%label_logit_init : tensor<64xf32>) {
    ^bb0(%t: f32, %s: f32, %acc: f32):
      %ts = arith.mulf %t, %s : f32
      %sum = arith.addf %acc, %ts : f32
      linalg.yield %sum : f32
    } -> tensor<64xf32>
    %loss_sum_empty = tensor.empty() : tensor<f32>
    %loss_sum_init = linalg.fill ins(%zero : f32) outs(%loss_sum_empty : tensor<f32>) -> tensor<f32>
    %loss_sum = linalg.generic {indexing_maps = [#id1, #id1, #to_scalar], iterator_types = ["reduction"]}
        ins(%sumexp, %label_logit : tensor<64xf32>, tensor<64xf32>) outs(%loss_sum_init : tensor<f32>) {
    ^bb0(%z: f32, %t: f32, %acc: f32):
      %lse = math.log %z : f32
      %row_loss = arith.subf %lse, %t : f32
      %sum = arith.addf %acc, %row_loss : f32
      linalg.yield %sum : f32
    } -> tensor<f32>
    %loss_empty = tensor.empty() : tensor<f32>
    %loss = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
        ins(%loss_sum : tensor<f32>) outs(%loss_empty : tensor<f32>) {
    ^bb0(%s: f32, %out: f32):
      %mean = arith.mulf %s, %inv_batch : f32
      linalg.yield %mean : f32
    } -> tensor<f32>

    // --------------------------------------------------------------- backward
    // dloss/dlogits = (softmax(logits) - y) / 64, with softmax = exp / sumexp.
    %dlogits_empty = tensor.empty() : tensor<64x10xf32>
    %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%exp, %sumexp, %y : tensor<64x10xf32>, tensor<64xf32>, tensor<64x10xf32>)
        outs(%dlogits_empty : tensor<64x10xf32>) {
    ^bb0(%e: f32, %z: f32, %t: f32, %out: f32):
      %p = arith.divf %e, %z : f32
      %diff = arith.subf %p, %t : f32
      %g = arith.mulf %diff, %inv_batch : f32
      linalg.yield %g : f32
    } -> tensor<64x10xf32>

    // Output layer: dw2 = h^T @ dlogits, db2 = sum over the batch of dlogits.
    %ht_empty = tensor.empty() : tensor<256x64xf32>
    %ht = linalg.transpose ins(%h : tensor<64x256xf32>) outs(%ht_empty : tensor<256x64xf32>) permutation = [1, 0]
    %dw2_empty = tensor.empty() : tensor<256x10xf32>
    %dw2_init = linalg.fill ins(%zero : f32) outs(%dw2_empty : tensor<256x10xf32>) -> tensor<256x10xf32>
    %dw2 = linalg.matmul ins(%ht, %dlogits : tensor<256x64xf32>, tensor<64x10xf32>)
                         outs(%dw2_init : tensor<256x10xf32>) -> tensor<256x10xf32>
    %db2_empty = tensor.empty() : tensor<10xf32>
    %db2_init = linalg.fill ins(%zero : f32) outs(%db2_empty : tensor<10xf32>) -> tensor<10xf32>
    %db2 = linalg.reduce ins(%dlogits : tensor<64x10xf32>) outs(%db2_init : tensor<10xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }

    // Hidden layer: dh = (dlogits @ w2^T) masked by relu' (h > 0), then
    // dw1 = x^T @ dh and db1 = sum over the batch of dh.
    %w2t_empty = tensor.empty() : tensor<10x256xf32>
    %w2t = linalg.transpose ins(%w2 : tensor<256x10xf32>) outs(%w2t_empty : tensor<10x256xf32>) permutation = [1, 0]
    %dh_pre_empty = tensor.empty() : tensor<64x256xf32>
    %dh_pre_init = linalg.fill ins(%zero : f32) outs(%dh_pre_empty : tensor<64x256xf32>) -> tensor<64x256xf32>
    %dh_pre = linalg.matmul ins(%dlogits, %w2t : tensor<64x10xf32>, tensor<10x256xf32>)
                            outs(%dh_pre_init : tensor<64x256xf32>) -> tensor<64x256xf32>
    %dh_empty = tensor.empty() : tensor<64x256xf32>
    %dh = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%dh_pre, %h : tensor<64x256xf32>, tensor<64x256xf32>) outs(%dh_empty : tensor<64x256xf32>) {
    ^bb0(%g: f32, %a: f32, %out: f32):
      %active = arith.cmpf ogt, %a, %zero : f32
      %masked = arith.select %active, %g, %zero : f32
      linalg.yield %masked : f32
    } -> tensor<64x256xf32>
    %xt_empty = tensor.empty() : tensor<784x64xf32>
    %xt = linalg.transpose ins(%x : tensor<64x784xf32>) outs(%xt_empty : tensor<784x64xf32>) permutation = [1, 0]
    %dw1_empty = tensor.empty() : tensor<784x256xf32>
    %dw1_init = linalg.fill ins(%zero : f32) outs(%dw1_empty : tensor<784x256xf32>) -> tensor<784x256xf32>
    %dw1 = linalg.matmul ins(%xt, %dh : tensor<784x64xf32>, tensor<64x256xf32>)
                         outs(%dw1_init : tensor<784x256xf32>) -> tensor<784x256xf32>
    %db1_empty = tensor.empty() : tensor<256xf32>
    %db1_init = linalg.fill ins(%zero : f32) outs(%db1_empty : tensor<256xf32>) -> tensor<256xf32>
    %db1 = linalg.reduce ins(%dh : tensor<64x256xf32>) outs(%db1_init : tensor<256xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }

    // ----------------------------------------------------------------- update
    // Plain SGD: p_new = p - lr * grad.
    %w1_new_empty = tensor.empty() : tensor<784x256xf32>
    %w1_new = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%w1, %dw1 : tensor<784x256xf32>, tensor<784x256xf32>) outs(%w1_new_empty : tensor<784x256xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %step = arith.mulf %lr, %g : f32
      %new = arith.subf %p, %step : f32
      linalg.yield %new : f32
    } -> tensor<784x256xf32>
    %b1_new_empty = tensor.empty() : tensor<256xf32>
    %b1_new = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%b1, %db1 : tensor<256xf32>, tensor<256xf32>) outs(%b1_new_empty : tensor<256xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %step = arith.mulf %lr, %g : f32
      %new = arith.subf %p, %step : f32
      linalg.yield %new : f32
    } -> tensor<256xf32>
    %w2_new_empty = tensor.empty() : tensor<256x10xf32>
    %w2_new = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%w2, %dw2 : tensor<256x10xf32>, tensor<256x10xf32>) outs(%w2_new_empty : tensor<256x10xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %step = arith.mulf %lr, %g : f32
      %new = arith.subf %p, %step : f32
      linalg.yield %new : f32
    } -> tensor<256x10xf32>
    %b2_new_empty = tensor.empty() : tensor<10xf32>
    %b2_new = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%b2, %db2 : tensor<10xf32>, tensor<10xf32>) outs(%b2_new_empty : tensor<10xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %step = arith.mulf %lr, %g : f32
      %new = arith.subf %p, %step : f32
      linalg.yield %new : f32
    } -> tensor<10xf32>

    return %loss, %w1_new, %b1_new, %w2_new, %b2_new
        : tensor<f32>, tensor<784x256xf32>, tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>
  }
}
