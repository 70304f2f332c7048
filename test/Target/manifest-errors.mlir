// RUN: zshard-translate --zshard-to-manifest --split-input-file --verify-diagnostics %s

// Tests that a module without a step ABI record (zshard-record-abi never
// ran) gets no manifest but one line saying what to run.
// expected-error @+1 {{the module has no step ABI record (zshard.abi): run --zshard-record-abi before lowering}}
module {
  llvm.func @train_step(%arg0: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Tests that a zshard.abi that is not a step ABI record is refused.
// expected-error @+1 {{zshard.abi is not a step ABI record (#zshard.step_abi): "train_step"}}
module attributes {zshard.abi = "train_step"} {
}

// -----

// Tests that the record must name a lowered step of the module.
// expected-error @+1 {{the module has no llvm.func @train_step, the step its ABI record names (write the manifest of a lowered step)}}
module attributes {zshard.abi = #zshard.step_abi<step = "train_step",
    arguments = [#zshard.abi_argument<role = param, name = "w", type = tensor<4xf32>>],
    results = [#zshard.abi_result<role = loss, type = tensor<f32>>],
    units = [], ranks = 1>} {
  func.func @train_step(%w: tensor<4xf32>) -> tensor<f32> {
    %l = tensor.empty() : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the lowered step must take one buffer per argument and result
// of its record.
module attributes {zshard.abi = #zshard.step_abi<step = "train_step",
    arguments = [#zshard.abi_argument<role = param, name = "w", type = tensor<4xf32>>],
    results = [#zshard.abi_result<role = loss, type = tensor<f32>>],
    units = [], ranks = 1>} {
  // expected-error @+1 {{the step takes 1 buffers but its ABI record has 2 arguments and results}}
  llvm.func @train_step(%arg0: !llvm.ptr) {
    llvm.return
  }
}
