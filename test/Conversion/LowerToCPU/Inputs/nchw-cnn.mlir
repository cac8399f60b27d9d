// Two convolutions as torch-mlir exports a PyTorch CNN: NCHW images, FCHW
// filters, `tensor.pad` for the padding of the first, stride 2 for the
// second; the loss is the sum of the second's output.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sum4 = affine_map<(d0, d1, d2, d3) -> ()>
module {
  func.func private @loss(%w1: tensor<4x3x3x3xf32>, %w2: tensor<4x4x3x3xf32>,
                          %x: tensor<2x3x8x8xf32>) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
    %e1 = tensor.empty() : tensor<2x4x8x8xf32>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
        ins(%padded, %w1 : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%z1 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %e2 = tensor.empty() : tensor<2x4x3x3xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
    %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
        ins(%y1, %w2 : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%z2 : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
    %e0 = tensor.empty() : tensor<f32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %sum = linalg.generic {indexing_maps = [#id4, #sum4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
        ins(%y2 : tensor<2x4x3x3xf32>) outs(%z0 : tensor<f32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %sum : tensor<f32>
  }

  func.func @train_step(%w1: tensor<4x3x3x3xf32> {recast.param},
                        %w2: tensor<4x4x3x3xf32> {recast.param},
                        %x: tensor<2x3x8x8xf32>)
      -> (tensor<f32>, tensor<4x3x3x3xf32>, tensor<4x4x3x3xf32>) {
    %loss, %g1, %g2 = recast.value_and_grad @loss(%w1, %w2, %x) {wrt = array<i64: 0, 1>}
        : (tensor<4x3x3x3xf32>, tensor<4x4x3x3xf32>, tensor<2x3x8x8xf32>)
        -> (tensor<f32>, tensor<4x3x3x3xf32>, tensor<4x4x3x3xf32>)
    %lr = arith.constant 0.01 : f32
    %n1e = tensor.empty() : tensor<4x3x3x3xf32>
    %n1 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%w1, %g1 : tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) outs(%n1e : tensor<4x3x3x3xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %m = arith.mulf %g, %lr : f32
      %s = arith.subf %p, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3x3x3xf32>
    %n2e = tensor.empty() : tensor<4x4x3x3xf32>
    %n2 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%w2, %g2 : tensor<4x4x3x3xf32>, tensor<4x4x3x3xf32>) outs(%n2e : tensor<4x4x3x3xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %m = arith.mulf %g, %lr : f32
      %s = arith.subf %p, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4x3x3xf32>
    return %loss, %n1, %n2 : tensor<f32>, tensor<4x3x3x3xf32>, tensor<4x4x3x3xf32>
  }
}
