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
