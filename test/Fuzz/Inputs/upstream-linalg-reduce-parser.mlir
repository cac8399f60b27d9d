func.func @f(%a: tensor<64xf32>, %s: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%a : tensor<64xf32>) outs(%s : tensor<f32>) dimensions = l[0]
    (%p: f32, %q: f32) {
      %t = arith.addf %p, %q : f32
      linalg.yield %t : f32
    }
  return %r : tensor<f32>
}
