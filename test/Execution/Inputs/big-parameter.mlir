// A step whose parameter (1.6 GB) fits the machine but not the address
// space recast-run-out-of-memory.test gives it.
func.func @train_step(%w: tensor<20000x20000xf32> {recast.param}, %x: tensor<f32>) -> (tensor<f32>, tensor<20000x20000xf32>) {
  return %x, %w : tensor<f32>, tensor<20000x20000xf32>
}
