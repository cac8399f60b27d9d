// RUN: recast-opt %s -split-input-file -test-print-memory-report -verify-diagnostics

/// A chain: each value dies when the next op has read it. Arguments are live
/// throughout; tensor.empty holds no bytes.
// expected-remark @below {{peak 48 bytes at step 2 (params 0, inputs 16, activations 48, parameter copies 0, gradients 0, temporaries 0)}}
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{live 16 bytes}}
  %e = tensor.empty() : tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 48 bytes}}
  %b = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 48 bytes}}
  %c = linalg.exp ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  return %c : tensor<4xf32>
}

// -----

/// A diamond: %a feeds two branches and stays live until the second one.
// expected-remark @below {{peak 64 bytes at step 3 (params 0, inputs 16, activations 64, parameter copies 0, gradients 0, temporaries 0)}}
func.func @diamond(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{live 16 bytes}}
  %e = tensor.empty() : tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 48 bytes}}
  %b = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 64 bytes}}
  %c = linalg.log ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 64 bytes}}
  %d = linalg.add ins(%b, %c : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  return %d : tensor<4xf32>
}

// -----

/// A large value defined early and used late holds its 256 bytes across every
/// step in between; the 64-byte parameter counts at every step. The slice is
/// a view of it (a subview after bufferization): it holds no bytes of its own
/// and keeps all 256 alive until the slice's last use.
// expected-remark @below {{peak 368 bytes at step 4 (params 64, inputs 16, activations 320, parameter copies 0, gradients 0, temporaries 0)}}
func.func @used_late(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{live 80 bytes}}
  %e = tensor.empty() : tensor<4xf32>
  // expected-remark @below {{live 96 bytes}}
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 96 bytes}}
  %cst = arith.constant 1.0 : f32
  // expected-remark @below {{live 352 bytes}}
  %big = tensor.splat %cst : tensor<64xf32>
  // expected-remark @below {{live 368 bytes}}
  %b = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 368 bytes}}
  %c = linalg.exp ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 352 bytes}}
  %s = tensor.extract_slice %big[0] [4] [1] : tensor<64xf32> to tensor<4xf32>
  // expected-remark @below {{live 368 bytes}}
  %d = linalg.add ins(%c, %s : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 96 bytes}}
  return %d : tensor<4xf32>
}

// -----

/// A result nobody reads is live only while it is produced.
// expected-remark @below {{peak 48 bytes at step 2 (params 0, inputs 16, activations 32, parameter copies 0, gradients 0, temporaries 0)}}
func.func @dead_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{live 16 bytes}}
  %e = tensor.empty() : tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 48 bytes}}
  %dead = linalg.log ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  return %a : tensor<4xf32>
}

// -----

/// Element sizes: bf16 2 bytes, i1 1 byte, index 8 bytes, f64 8 bytes;
/// scalars take none.
// expected-remark @below {{peak 67 bytes at step 0 (params 0, inputs 67, activations 0, parameter copies 0, gradients 0, temporaries 0)}}
func.func @element_sizes(%a: tensor<4xbf16>, %b: tensor<3xi1>, %c: tensor<2xindex>,
                         %d: tensor<5xf64>, %s: f32) {
  // expected-remark @below {{live 67 bytes}}
  return
}

// -----

/// Uses inside a region count at the op that holds the region.
// expected-remark @below {{peak 48 bytes at step 2 (params 0, inputs 16, activations 32, parameter copies 0, gradients 0, temporaries 0)}}
func.func @nested_use(%x: tensor<4xf32>, %flag: i1) -> tensor<4xf32> {
  // expected-remark @below {{live 16 bytes}}
  %e = tensor.empty() : tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 48 bytes}}
  %r = scf.if %flag -> tensor<4xf32> {
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  // expected-remark @below {{live 32 bytes}}
  return %r : tensor<4xf32>
}

// -----

/// In-place accumulation: the zero-filled init of the add dies at the add,
/// which bufferization writes into the same buffer, so the init and the
/// result are one 16-byte buffer at that step, not two.
// expected-remark @below {{peak 32 bytes at step 2 (params 0, inputs 16, activations 16, parameter copies 0, gradients 0, temporaries 0)}}
func.func @accumulate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{live 16 bytes}}
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{live 16 bytes}}
  %e = tensor.empty() : tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  %a = linalg.add ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  return %a : tensor<4xf32>
}

// -----

/// An init that is read again later keeps its own buffer: the add's result
/// needs a second one.
// expected-remark @below {{peak 64 bytes at step 4 (params 0, inputs 16, activations 48, parameter copies 0, gradients 0, temporaries 0)}}
func.func @init_read_later(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{live 16 bytes}}
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{live 16 bytes}}
  %e = tensor.empty() : tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 48 bytes}}
  %a = linalg.add ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 64 bytes}}
  %b = linalg.add ins(%a, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{live 32 bytes}}
  return %b : tensor<4xf32>
}

// -----

/// Views (a slice, a reshape, a write into a slice) share their source's
/// buffer, as one-shot bufferization makes them (subviews, an in-place copy
/// into a subview, expand_shape): each takes no bytes, and the 32-byte %buf
/// stays alive until the last of them is read, by %y.
// expected-remark @below {{peak 56 bytes at step 7 (params 0, inputs 8, activations 48, parameter copies 0, gradients 0, temporaries 0)}}
func.func @views(%x: tensor<2xf32>) -> tensor<2x2xf32> {
  // expected-remark @below {{live 8 bytes}}
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{live 8 bytes}}
  %e = tensor.empty() : tensor<8xf32>
  // expected-remark @below {{live 40 bytes}}
  %buf = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  // expected-remark @below {{live 40 bytes}}
  %v = tensor.extract_slice %buf[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  // expected-remark @below {{live 40 bytes}}
  %w = tensor.insert_slice %x into %v[2] [2] [1] : tensor<2xf32> into tensor<4xf32>
  // expected-remark @below {{live 40 bytes}}
  %m = tensor.expand_shape %w [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  // expected-remark @below {{live 40 bytes}}
  %e2 = tensor.empty() : tensor<2x2xf32>
  // expected-remark @below {{live 56 bytes}}
  %y = linalg.exp ins(%m : tensor<2x2xf32>) outs(%e2 : tensor<2x2xf32>) -> tensor<2x2xf32>
  // expected-remark @below {{live 24 bytes}}
  return %y : tensor<2x2xf32>
}

// -----

/// A training step (the loss, then the updated parameter): what the loss
/// depends on is activations, except the values only the parameter reaches
/// (its bf16 copy %wb and that widened, %wf): parameter copies. The values
/// of %w's shape that lead to its update are gradients (%g1 reads %y, which
/// stays an activation); any other value is a temporary. The forward saves
/// %y for the backward (the loss, read by the return only, is not saved).
// expected-remark @below {{peak 68 bytes at step 5 (params 16, inputs 16, activations 20, parameter copies 24, gradients 48, temporaries 16; saved for the backward 16 and parameter copies 0)}}
func.func @train_step(%w: tensor<4xf32> {recast.param}, %x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  // expected-remark @below {{live 40 bytes}}
  %wb = arith.truncf %w : tensor<4xf32> to tensor<4xbf16>
  // expected-remark @below {{live 56 bytes}}
  %wf = arith.extf %wb : tensor<4xbf16> to tensor<4xf32>
  // expected-remark @below {{live 64 bytes}}
  %y = arith.mulf %wf, %x : tensor<4xf32>
  // expected-remark @below {{live 48 bytes}}
  %init = tensor.empty() : tensor<f32>
  // expected-remark @below {{live 52 bytes}}
  %loss = linalg.reduce ins(%y : tensor<4xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  // expected-remark @below {{live 68 bytes}}
  %t = arith.mulf %x, %x : tensor<4xf32>
  // expected-remark @below {{live 68 bytes}}
  %g1 = arith.mulf %y, %x : tensor<4xf32>
  // expected-remark @below {{live 68 bytes}}
  %g = arith.addf %g1, %g1 : tensor<4xf32>
  // expected-remark @below {{live 68 bytes}}
  %new = arith.subf %w, %g : tensor<4xf32>
  // expected-remark @below {{live 52 bytes}}
  return %loss, %new : tensor<f32>, tensor<4xf32>
}
