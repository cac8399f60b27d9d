// One SGD step of y ~ w * x + b (elementwise over 16 features, batch 4),
// with a step counter as state: no contraction, so on a GPU every op is a
// generated kernel and no cuBLASLt call is made.
//
//   d     = w * x + b - y
//   loss  = sum(d^2) / 64
//   w    -= 0.1 * sum_r(2 d x) / 64,  b -= 0.1 * sum_r(2 d) / 64
//   count = count + 1

#id2 = affine_map<(r, c) -> (r, c)>
#col = affine_map<(r, c) -> (c)>
#all = affine_map<(r, c) -> ()>
#id1 = affine_map<(c) -> (c)>
#scalar = affine_map<() -> ()>

module {
  func.func @train_step(%w: tensor<16xf32> {recast.param}, %b: tensor<16xf32> {recast.param},
                        %count: tensor<f32> {recast.state},
                        %x: tensor<4x16xf32>, %y: tensor<4x16xf32>)
      -> (tensor<f32>, tensor<16xf32>, tensor<16xf32>, tensor<f32>) {
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %two_over_n = arith.constant 0.03125 : f32
    %inv_n = arith.constant 0.015625 : f32
    %lr = arith.constant 0.1 : f32

    %d_empty = tensor.empty() : tensor<4x16xf32>
    %d = linalg.generic {indexing_maps = [#col, #id2, #col, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%w, %x, %b, %y : tensor<16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<4x16xf32>)
        outs(%d_empty : tensor<4x16xf32>) {
    ^bb0(%wv: f32, %xv: f32, %bv: f32, %yv: f32, %out: f32):
      %p = arith.mulf %wv, %xv : f32
      %q = arith.addf %p, %bv : f32
      %r = arith.subf %q, %yv : f32
      linalg.yield %r : f32
    } -> tensor<4x16xf32>

    %sum_empty = tensor.empty() : tensor<f32>
    %sum_init = linalg.fill ins(%zero : f32) outs(%sum_empty : tensor<f32>) -> tensor<f32>
    %sum = linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]}
        ins(%d : tensor<4x16xf32>) outs(%sum_init : tensor<f32>) {
    ^bb0(%dv: f32, %acc: f32):
      %sq = arith.mulf %dv, %dv : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %loss_empty = tensor.empty() : tensor<f32>
    %loss = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
        ins(%sum : tensor<f32>) outs(%loss_empty : tensor<f32>) {
    ^bb0(%s: f32, %out: f32):
      %l = arith.mulf %s, %inv_n : f32
      linalg.yield %l : f32
    } -> tensor<f32>

    %g_empty = tensor.empty() : tensor<16xf32>
    %gw_init = linalg.fill ins(%zero : f32) outs(%g_empty : tensor<16xf32>) -> tensor<16xf32>
    %gb_init = linalg.fill ins(%zero : f32) outs(%g_empty : tensor<16xf32>) -> tensor<16xf32>
    %gw, %gb = linalg.generic {indexing_maps = [#id2, #id2, #col, #col], iterator_types = ["reduction", "parallel"]}
        ins(%d, %x : tensor<4x16xf32>, tensor<4x16xf32>) outs(%gw_init, %gb_init : tensor<16xf32>, tensor<16xf32>) {
    ^bb0(%dv: f32, %xv: f32, %aw: f32, %ab: f32):
      %dx = arith.mulf %dv, %xv : f32
      %nw = arith.addf %aw, %dx : f32
      %nb = arith.addf %ab, %dv : f32
      linalg.yield %nw, %nb : f32, f32
    } -> (tensor<16xf32>, tensor<16xf32>)

    %w_empty = tensor.empty() : tensor<16xf32>
    %b_empty = tensor.empty() : tensor<16xf32>
    %w_new, %b_new = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%w, %b, %gw, %gb : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
        outs(%w_empty, %b_empty : tensor<16xf32>, tensor<16xf32>) {
    ^bb0(%wv: f32, %bv: f32, %gwv: f32, %gbv: f32, %ow: f32, %ob: f32):
      %sw = arith.mulf %gwv, %two_over_n : f32
      %uw = arith.mulf %sw, %lr : f32
      %nw = arith.subf %wv, %uw : f32
      %sb = arith.mulf %gbv, %two_over_n : f32
      %ub = arith.mulf %sb, %lr : f32
      %nb = arith.subf %bv, %ub : f32
      linalg.yield %nw, %nb : f32, f32
    } -> (tensor<16xf32>, tensor<16xf32>)

    %count_empty = tensor.empty() : tensor<f32>
    %count_new = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
        ins(%count : tensor<f32>) outs(%count_empty : tensor<f32>) {
    ^bb0(%c: f32, %out: f32):
      %n = arith.addf %c, %one : f32
      linalg.yield %n : f32
    } -> tensor<f32>

    return %loss, %w_new, %b_new, %count_new : tensor<f32>, tensor<16xf32>, tensor<16xf32>, tensor<f32>
  }
}
