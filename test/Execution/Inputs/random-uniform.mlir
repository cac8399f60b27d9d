// Draws counter-based random numbers for test/Execution/random-philox.py:
// recast.random_uniform in f64 (the Philox word times 2^-32, so the word is
// recovered exactly), f32 and bf16, and recast.dropout of ones at rate 0.25.
// The draws are returned as state, so that --save writes them; the loss is
// the sum of the f32 draws.

#id = affine_map<(i) -> (i)>
#to_scalar = affine_map<(i) -> ()>

func.func @train_step(%u64: tensor<65536xf64> {recast.state},
                      %u32: tensor<65536xf32> {recast.state},
                      %u16: tensor<65536xbf16> {recast.state},
                      %drop: tensor<65536xf32> {recast.state},
                      %ones: tensor<65536xf32> {recast.init = "ones"},
                      %seed: tensor<i64>, %offset: tensor<i64>)
    -> (tensor<f32>, tensor<65536xf64>, tensor<65536xf32>, tensor<65536xbf16>,
        tensor<65536xf32>) {
  %a = recast.random_uniform %seed, %offset : tensor<65536xf64>
  %b = recast.random_uniform %seed, %offset : tensor<65536xf32>
  %c = recast.random_uniform %seed, %offset : tensor<65536xbf16>
  %d = recast.dropout %ones, %seed, %offset {rate = 0.25 : f64} : tensor<65536xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #to_scalar], iterator_types = ["reduction"]}
      ins(%b : tensor<65536xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum, %a, %b, %c, %d
      : tensor<f32>, tensor<65536xf64>, tensor<65536xf32>, tensor<65536xbf16>, tensor<65536xf32>
}

// The gradient of sum(dropout(x)) with respect to x is the mask scaled by
// 1 / (1 - rate): @grad_step returns it in place of %x.
func.func private @dropout_sum(%x: tensor<65536xf32>, %seed: tensor<i64>,
                               %offset: tensor<i64>) -> tensor<f32> {
  %d = recast.dropout %x, %seed, %offset {rate = 0.25 : f64} : tensor<65536xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #to_scalar], iterator_types = ["reduction"]}
      ins(%d : tensor<65536xf32>) outs(%z : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

func.func @grad_step(%x: tensor<65536xf32> {recast.state, recast.init = "uniform:1"},
                     %seed: tensor<i64>, %offset: tensor<i64>)
    -> (tensor<f32>, tensor<65536xf32>) {
  %l, %dx = recast.value_and_grad @dropout_sum(%x, %seed, %offset) {wrt = array<i64: 0>}
      : (tensor<65536xf32>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<65536xf32>)
  return %l, %dx : tensor<f32>, tensor<65536xf32>
}
