// Functions that break the training-step calling convention, one per entry.

func.func @too_few_results(%p: tensor<4xf32> {recast.param}, %m: tensor<4xf32> {recast.state})
    -> (tensor<f32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %p : tensor<f32>, tensor<4xf32>
}

func.func @vector_loss(%p: tensor<4xf32> {recast.param}) -> (tensor<4xf32>, tensor<4xf32>) {
  return %p, %p : tensor<4xf32>, tensor<4xf32>
}

func.func @wrong_update_type(%p: tensor<4xf32> {recast.param}) -> (tensor<f32>, tensor<2x2xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  %r = tensor.expand_shape %p [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %c, %r : tensor<f32>, tensor<2x2xf32>
}

func.func @dynamic_batch(%p: tensor<4xf32> {recast.param}, %x: tensor<?xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %p : tensor<f32>, tensor<4xf32>
}

func.func @integer_batch(%p: tensor<4xf32> {recast.param}, %labels: tensor<4xi32>) -> (tensor<f32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %p : tensor<f32>, tensor<4xf32>
}

func.func @scalar_argument(%p: tensor<4xf32> {recast.param}, %lr: f32) -> (tensor<f32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %p : tensor<f32>, tensor<4xf32>
}

func.func @f8_batch(%p: tensor<4xf32> {recast.param}, %x: tensor<4xf8E4M3FN>) -> (tensor<f32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %p : tensor<f32>, tensor<4xf32>
}

/// Valid, with a labelled integer batch: the counterpart of @integer_batch.
func.func @labelled_batch(%p: tensor<4xf32> {recast.param}, %labels: tensor<4xi32> {recast.init = "index:3"})
    -> (tensor<f32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %p : tensor<f32>, tensor<4xf32>
}

/// The loss is log(0) = -inf at the first step: p starts at zero.
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @diverges(%p: tensor<4xf32> {recast.param}) -> (tensor<f32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%p : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %l = math.log %a : f32
    %r = arith.addf %acc, %l : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %loss, %p : tensor<f32>, tensor<4xf32>
}
