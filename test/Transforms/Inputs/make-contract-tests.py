#!/usr/bin/env python3
import os
# Writes the two zshard-verify-contract tests from one well-formed step.
here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
base=open(os.path.join(here, 'Inputs', 'contract-step.mlir')).read()
W='%w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>}'
M='%m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>}'
X='%x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"}'
LR='%lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"}'
LOSS='-> (tensor<f32> {zshard.role = #zshard.role<loss>},'
POUT='tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"}'
SOUT='tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"}'
sig=[]
def case(desc, old, new, *errs):
    assert old in base, old
    sig.append((desc, base.replace(old,new,1), errs))
def extra(desc, arg, *errs):
    sig.append((desc, base.replace(LR, LR+',\n    '+arg,1), errs))
extra("a step argument is a static tensor", '%extra: tensor<?x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "e"}', "argument #4 must be a statically shaped ranked tensor, got 'tensor<?x4xf32>'")
case("every argument has a role", X, '%x: tensor<8x4xf32> {zshard.name = "x"}', "argument #2 has no zshard.role")
case("arguments are named", X, '%x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>}', "argument #2 (batch) needs a zshard.name")
extra("names are dotted paths", '%extra: tensor<2xf32> {zshard.role = #zshard.role<batch>, zshard.name = "fc..bias"}', "argument #4 ('fc..bias'): 'fc..bias' is not a dotted path")
case("names are unique", X, '%x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "lr"}', "name 'lr' is used by arguments #2 and #3")
case("parameters have an init spec", W, W.replace(', zshard.init = #zshard.init<normal(0, 0.02)>',''), "argument #0 ('fc.0.weight') needs a zshard.init")
extra("parameters are floating point", '%extra: tensor<2xi32> {zshard.role = #zshard.role<param>, zshard.name = "p", zshard.init = #zshard.init<zeros>}', "argument #4 ('p') must have a floating-point element type", "argument #4 ('p') has no param_out result")
case("only optimizer state copies its parameter", W, W.replace('normal(0, 0.02)','param'), "argument #0 ('fc.0.weight'): init 'param' copies the parameter an optimizer state belongs to; a parameter cannot use it")
case("optimizer state names its parameter", M, M.replace(' zshard.param = "fc.0.weight",',''), "argument #1 ('fc.0.weight.exp_avg') needs a zshard.param naming its parameter")
case("optimizer state belongs to an existing parameter", M, M.replace('zshard.param = "fc.0.weight"','zshard.param = "fc.1.weight"'), "argument #1 ('fc.0.weight.exp_avg') belongs to unknown parameter 'fc.1.weight'")
extra("optimizer state has the shape of its parameter", '%extra: tensor<8xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg_sq", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>}', "argument #4 ('fc.0.weight.exp_avg_sq') has shape [8] but its parameter 'fc.0.weight' has shape [4, 2]", "argument #4 ('fc.0.weight.exp_avg_sq') has no opt_state_out result")
extra("hyper-parameters are scalar floats", '%extra: tensor<2xf32> {zshard.role = #zshard.role<hyper>, zshard.name = "beta"}', "argument #4 ('beta') must be a rank-0 floating-point tensor, got 'tensor<2xf32>'")
case("results have a role", LOSS, '-> (tensor<f32>,', "result #0 has no zshard.role", "the step has no loss result")
case("a step has one loss", POUT, 'tensor<4x2xf32> {zshard.role = #zshard.role<loss>}', "results #0 and #1 are both the loss; a step has one", "argument #0 ('fc.0.weight') has no param_out result")
case("updated parameters are named", POUT, 'tensor<4x2xf32> {zshard.role = #zshard.role<param_out>}', "result #1 (param_out) needs a zshard.name", "argument #0 ('fc.0.weight') has no param_out result")
case("updated parameters exist", POUT, POUT.replace('fc.0.weight','fc.9.weight'), "result #1 updates unknown parameter 'fc.9.weight'", "argument #0 ('fc.0.weight') has no param_out result")
case("updated optimizer state exists and all state is updated", SOUT, SOUT.replace('exp_avg','exp_avg_sq'), "result #2 updates unknown optimizer state 'fc.0.weight.exp_avg_sq'", "argument #1 ('fc.0.weight.exp_avg') has no opt_state_out result")
case("a parameter is updated once", SOUT, POUT, "'fc.0.weight' is updated by results #1 and #2", "argument #1 ('fc.0.weight.exp_avg') has no opt_state_out result")

out=['// RUN: zshard-opt %s -split-input-file -verify-diagnostics --zshard-verify-contract | FileCheck %s\n\n',
     '// Tests that a well-formed step passes unchanged, and that every signature\n',
     '// rule of docs/contract.md has its own diagnostic naming the argument or\n',
     '// result. Rules on ops are in zshard-verify-contract-ops.mlir.\n\n',
     '// CHECK-LABEL: func.func @train_step\n// CHECK: linalg.matmul\n// CHECK: return\n', base]
for desc,s,errs in sig:
    exp=''.join('// expected-error @+%d {{%s}}\n'%(len(errs)-i,e) for i,e in enumerate(errs))
    out.append('\n// -----\n\n// Tests that '+desc+'.\n'+s.replace('func.func @train_step(',exp+'func.func @train_step(',1))
out.append('\n// -----\n\n// Tests that ops may carry name and file locations as debug information\n// beside their module paths, and that an op of the root module has no path.\n'+base.replace('%c1 = arith.constant 1.0 : f32','%c1 = arith.constant 1.0 : f32 loc("h.0.mlp"("model.py":12:5))').replace('%e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>','%e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32> loc("/tmp/model.py":1:1)'))
out.append('''
// -----

// Tests that the loss is a scalar float.
// expected-error @+1 {{result #0 (loss) must be a rank-0 floating-point tensor, got 'tensor<2xf32>'}}
func.func @train_step(%x: tensor<2xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<2xf32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step} {
  return %x : tensor<2xf32>
}

// -----

// Tests that an updated parameter has the parameter's type.
// expected-error @+1 {{result #1 ('w') has type 'tensor<2xf16>' but argument #0 has type 'tensor<2xf32>'}}
func.func @train_step(%w: tensor<2xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<zeros>},
                      %l: tensor<f32> {zshard.role = #zshard.role<batch>, zshard.name = "l"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<2xf16> {zshard.role = #zshard.role<param_out>, zshard.name = "w"})
    attributes {zshard.step} {
  %h = arith.truncf %w : tensor<2xf32> to tensor<2xf16>
  return %l, %h : tensor<f32>, tensor<2xf16>
}
''')
out.append('\n// -----\n\n// Tests that a module without a step is rejected.\n// expected-error @+1 {{no func.func is marked zshard.step}}\nmodule {\n  func.func @helper() {\n    return\n  }\n}\n')
out.append('\n// -----\n\n// Tests that a module holds one step.\nmodule {\n'+base.replace('func.func @train_step(','// expected-note @+1 {{first step here}}\nfunc.func @train_step(',1)+'// expected-error @+1 {{second function marked zshard.step; a module holds exactly one step}}\n'+base.replace('func.func @train_step(','func.func @second(',1)+'}\n')
out.append('\n// -----\n\n// Tests that a step has a body.\n// expected-error @+1 {{the step has no body}}\nfunc.func private @train_step(%w: tensor<2xf32>) attributes {zshard.step}\n')
open(os.path.join(here, 'zshard-verify-contract.mlir'),'w').write(''.join(out))

ops=[]
def opcase(desc, old, new, check):
    assert old in base, old
    ops.append((desc, base.replace(old,new,1), check))
opcase("ops come from the contract's dialects", '%lrv = tensor.extract', '%u = memref.alloc() {zshard.path = "fc.0"} : memref<2xf32>\n  %lrv = tensor.extract', 'zshard-verify-contract-ops.mlir:{{[0-9]+}}:8: error: op \'memref.alloc\' is outside the contract\'s dialects (func, linalg, tensor, arith, math, scf; zshard once sharded)')
opcase("module paths are dotted paths", '%oe = tensor.empty() : tensor<8x2xf32>', '%oe = tensor.empty() {zshard.path = "h.0..mlp"} : tensor<8x2xf32>', 'zshard-verify-contract-ops.mlir:{{[0-9]+}}:9: error: \'tensor.empty\' op module path "h.0..mlp" is not a dotted path (identifiers and decimal indices joined by \'.\', such as "h.0.attn")')
opcase("module paths are strings", '%oe = tensor.empty() : tensor<8x2xf32>', '%oe = tensor.empty() {zshard.path = 3 : i64} : tensor<8x2xf32>', 'zshard-verify-contract-ops.mlir:{{[0-9]+}}:9: error: \'tensor.empty\' op the attribute \'zshard.path\' must be a module path string such as "h.0.attn", got 3 : i64')
opcase("explicit phases agree with the derived ones", '%ones = linalg.fill ins(%c1 : f32)', '%ones = linalg.fill {zshard.phase = #zshard.phase<forward>} ins(%c1 : f32)', 'zshard-verify-contract-ops.mlir:{{[0-9]+}}:11: error: op \'linalg.fill\' is marked \'forward\' but derives as \'backward\'')
opcase("the loss does not depend on a hyper-parameter", '%y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z', '%lrf = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>\n  %z2 = linalg.fill {zshard.path = "fc.0"} ins(%lrf : f32) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>\n  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z2', 'zshard-verify-contract-ops.mlir:{{[0-9]+}}:10: error: the loss depends on hyper-parameter \'lr\' (argument #3) through this op; the loss must be that of the parameters going in')
opcase("the step body is a single block", '  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>', '  cf.br ^bb1\n^bb1:\n  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>', 'error: the step body must be a single block (no top-level control flow)')
out=['// RUN: not zshard-opt %s -split-input-file --zshard-verify-contract 2>&1 | FileCheck %s\n\n',
     '// Tests the rules on the ops of a step. Diagnostics are located at the\n',
     '// op\'s module path, so they are checked on the output.\n']
for i,(desc,s,check) in enumerate(ops):
    out.append(('\n// -----\n' if i else '')+'\n// Tests that '+desc+'.\n')
    out.append('// CHECK: '+check.replace('{{[0-9]+}}','@NUM@').replace('{{','{{[{][{]}}').replace('@NUM@','{{[0-9]+}}')+'\n')
    out.append(s)
open(os.path.join(here, 'zshard-verify-contract-ops.mlir'),'w').write(''.join(out))
