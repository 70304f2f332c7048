BASE = '''func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %s: tensor<4xf32> {zshard.role = #zshard.role<buffer>, zshard.name = "fc.scale", zshard.init = #zshard.init<ones>, zshard.persistent = true},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {zshard.path = "fc", indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %s, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %k: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %k : f32
      %q = arith.mulf %p, %b : f32
      %r = arith.addf %acc, %q : f32
      linalg.yield %r : f32
    } -> tensor<f32>
  %ge = tensor.empty() {zshard.path = "fc"} : tensor<4xf32>
  %g = linalg.generic {zshard.path = "fc", indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%s, %x : tensor<4xf32>, tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%k: f32, %b: f32, %out: f32):
      %q = arith.mulf %k, %b : f32
      linalg.yield %q : f32
    } -> tensor<4xf32>
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      {zshard.path = "fc"} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
'''
S = '%s: tensor<4xf32> {zshard.role = #zshard.role<buffer>, zshard.name = "fc.scale", zshard.init = #zshard.init<ones>, zshard.persistent = true}'
import sys
# Writes test/Transforms/zshard-verify-contract-buffers.mlir (and, with
# "base", Inputs/buffer-step.mlir, the well-formed step):
#   python3 make-buffer-tests.py tests > ../zshard-verify-contract-buffers.mlir
what = sys.argv[1]
if what == "base":
    print(BASE, end="")
    sys.exit()
cases = [
 ("a buffer records whether it is persistent", S, S.replace(', zshard.persistent = true', ''),
  ["argument #1 ('fc.scale') (buffer) needs zshard.persistent = true or false (whether checkpoints hold it)"]),
 ("zshard.persistent is a bool", S, S.replace('zshard.persistent = true', 'zshard.persistent = "yes"'),
  ['argument #1 (\'fc.scale\'): zshard.persistent must be true or false, got "yes"']),
 ("zshard.persistent is for buffers only", '%x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"}',
  '%x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x", zshard.persistent = false}',
  ["argument #4 ('x'): zshard.persistent is for buffer arguments only"]),
 ("a buffer has an init spec", S, S.replace(', zshard.init = #zshard.init<ones>', ''),
  ["argument #1 ('fc.scale') needs a zshard.init"]),
 ("a buffer does not copy a parameter", S, S.replace('#zshard.init<ones>', '#zshard.init<param>'),
  ["argument #1 ('fc.scale'): init 'param' copies the parameter an optimizer state belongs to; a buffer cannot use it"]),
 ("a buffer is floating point", '%t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})',
  '%t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"},\n    %mask: tensor<2xi32> {zshard.role = #zshard.role<buffer>, zshard.name = "mask", zshard.init = #zshard.init<zeros>, zshard.persistent = false})',
  ["argument #7 ('mask') must have a floating-point element type"]),
 ("a buffer is never a param_out", '        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})',
  '        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"},\n        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.scale"})',
  ["result #4 updates buffer 'fc.scale'; a buffer is never updated (it is no result of the step)"]),
 ("a buffer's name is unique", S, S.replace('"fc.scale"', '"fc.weight"'),
  ["name 'fc.weight' is used by arguments #0 and #1"]),
]
out = ["// RUN: zshard-opt %s -split-input-file -verify-diagnostics --zshard-verify-contract | FileCheck %s",
       "",
       "// The buffer role (docs/contract.md, \"Roles\"): a well-formed step with a",
       "// persistent buffer passes unchanged, and every rule of the role has its",
       "// own diagnostic. Generated by test/Transforms/Inputs/make-buffer-tests.py.",
       "",
       "// CHECK-LABEL: func.func @train_step(",
       '// CHECK-SAME:  %arg1: tensor<4xf32> {zshard.init = #zshard.init<ones>, zshard.name = "fc.scale", zshard.persistent = true, zshard.role = #zshard.role<buffer>}',
       BASE]
for desc, old, new, errs in cases:
    assert old in BASE, old
    text = BASE.replace(old, new, 1)
    if new.endswith('"fc.scale"})'):
        text = text.replace('return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>',
                            'return %loss, %w2, %m2, %v2, %s : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>')
        text = text.replace("tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {", "tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {",1)
    lines = text.split("\n")
    i = next(k for k, l in enumerate(lines) if l.startswith("func.func"))
    ann = [f"// expected-error @+{len(errs) - j} {{{{{e}}}}}" for j, e in enumerate(errs)]
    out += ["// -----", "", f"// Tests that {desc}."] + ann + [text]
print("\n".join(out), end="")
