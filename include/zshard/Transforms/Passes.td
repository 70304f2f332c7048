//===- Passes.td - zshard transformation passes ------------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TRANSFORMS_PASSES_TD
#define ZSHARD_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyContract : Pass<"zshard-verify-contract", "::mlir::ModuleOp"> {
  let summary = "Check that a module holds one well-formed training step";
  let description = [{
    Enforces the training-step contract of `docs/contract.md`: exactly one
    `func.func` marked `zshard.step`; static tensors only; roles, names and
    init specs on every argument and result; optimizer state tied to an
    existing parameter of the same shape; one loss; one `param_out` per
    parameter and one `opt_state_out` per optimizer state; ops only from
    func, linalg, tensor, arith and math; a module path as a name location on
    every top-level op; phases (derived by `PhaseAnalysis`) that agree with
    any explicit `zshard.phase` and never flow backwards. Every diagnostic
    names the offending argument, result or op.

    The pass changes nothing; it fails on the first module that breaks a
    rule, after reporting every broken rule it finds.
  }];
  let statistics = [
    Statistic<"numParams", "params", "Parameters in the step">,
    Statistic<"numParamElements", "param-elements",
              "Parameter elements in the step">,
    Statistic<"numOps", "ops", "Top-level ops in the step">
  ];
}

def AnnotatePhases : Pass<"zshard-annotate-phases", "::mlir::ModuleOp"> {
  let summary = "Write each op's derived phase as a zshard.phase attribute";
  let description = [{
    Runs `PhaseAnalysis` on the training step and writes its result on every
    top-level op as `zshard.phase = "forward" | "backward" | "optimizer"`.
    Useful to read a step, and to test the analysis.

    Before:
    ```mlir
    %y = linalg.matmul ins(%x, %w : ...) outs(%init : ...) -> tensor<8x2xf32>
    ```
    After:
    ```mlir
    %y = linalg.matmul {zshard.phase = "forward"} ins(%x, %w : ...) ...
    ```
  }];
}

#endif // ZSHARD_TRANSFORMS_PASSES_TD
