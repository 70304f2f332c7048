// RUN: zshard-opt %s --split-input-file --verify-diagnostics \
// RUN:   --zshard-form-units="layer-classes=LlamaDecoderLayer ranks=2" | FileCheck %s
// RUN: zshard-opt %s --split-input-file --verify-diagnostics \
// RUN:   --zshard-form-units="layer-classes=LlamaDecoderLayer,LlamaMLP ranks=2" \
// RUN:   | FileCheck %s --check-prefix=NESTED

// Wrapping by module class (FSDP's transformer_layer_cls): the modules of
// the class, as the step's zshard.module_classes records them, form the
// units; paths that differ only in an index become one pattern.

// CHECK:     zshard.unit @model.layers.0 on @world[0] full_shard padded(6) param(f32) reduce(f32) [
// CHECK-NEXT:  "model.layers.0.mlp.w" : 4 at 0,
// CHECK-NEXT:  "model.layers.0.norm.w" : 2 at 4
// CHECK:     zshard.unit @model.layers.1 on @world[0] full_shard padded(6)
// CHECK:     zshard.unit @root on @world[0] full_shard padded(2) param(f32) reduce(f32) [
// CHECK-NEXT:  "model.norm.weight" : 2 at 0
// Nested classes: a parameter goes to the innermost wrapped module.
// NESTED:    zshard.unit @model.layers.0.mlp on @world[0] full_shard padded(4) param(f32) reduce(f32) [
// NESTED-NEXT: "model.layers.0.mlp.w" : 4 at 0
// NESTED:    zshard.unit @model.layers.0 on @world[0] full_shard padded(2) param(f32) reduce(f32) [
// NESTED-NEXT: "model.layers.0.norm.w" : 2 at 0
// NESTED:    zshard.unit @model.layers.1.mlp
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "model.layers.0.mlp.w", zshard.init = #zshard.init<zeros>},
    %b: tensor<2xf32> {zshard.role = #zshard.role<param>, zshard.name = "model.layers.0.norm.w", zshard.init = #zshard.init<ones>},
    %c: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "model.layers.1.mlp.w", zshard.init = #zshard.init<zeros>},
    %d: tensor<2xf32> {zshard.role = #zshard.role<param>, zshard.name = "model.layers.1.norm.w", zshard.init = #zshard.init<ones>},
    %e: tensor<2xf32> {zshard.role = #zshard.role<param>, zshard.name = "model.norm.weight", zshard.init = #zshard.init<ones>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "model.layers.0.mlp.w"},
        tensor<2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "model.layers.0.norm.w"},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "model.layers.1.mlp.w"},
        tensor<2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "model.layers.1.norm.w"},
        tensor<2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "model.norm.weight"})
    attributes {zshard.step, zshard.module_classes = {
      "model" = "LlamaModel",
      "model.layers.0" = "LlamaDecoderLayer", "model.layers.0.mlp" = "LlamaMLP",
      "model.layers.1" = "LlamaDecoderLayer", "model.layers.1.mlp" = "LlamaMLP",
      "model.norm" = "LlamaRMSNorm"}} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %l = tensor.from_elements %c0 : tensor<f32> loc("")
  return %l, %a, %b, %c, %d, %e : tensor<f32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2xf32> loc("")
}

// -----

// Two layer classes under one indexed path (a hybrid stack): the pattern
// layers.<i> would also claim the other class's layer, so the class's
// modules stay exact paths.

// CHECK:     zshard.unit @layers.0 on @world[0]
// CHECK-NEXT:  "layers.0.w" : 4 at 0
// CHECK:     zshard.unit @root on @world[0]
// CHECK-NEXT:  "layers.1.w" : 4 at 0
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "layers.0.w", zshard.init = #zshard.init<zeros>},
    %b: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "layers.1.w", zshard.init = #zshard.init<zeros>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "layers.0.w"},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "layers.1.w"})
    attributes {zshard.step, zshard.module_classes = {
      "layers.0" = "LlamaDecoderLayer", "layers.0.mlp" = "LlamaMLP",
      "layers.1" = "MambaLayer"}} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %l = tensor.from_elements %c0 : tensor<f32> loc("")
  return %l, %a, %b : tensor<f32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// expected-error@+1 {{zshard-form-units: no module of the step has class 'LlamaDecoderLayer'; its classes are GPT2Block, LayerNorm}}
module {
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "h.0.w", zshard.init = #zshard.init<zeros>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "h.0.w"})
    attributes {zshard.step, zshard.module_classes = {"h.0" = "GPT2Block", "h.0.ln" = "LayerNorm"}} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %l = tensor.from_elements %c0 : tensor<f32> loc("")
  return %l, %a : tensor<f32>, tensor<4xf32> loc("")
}
}

// -----

// expected-error@+1 {{zshard-form-units: layer-classes needs the module classes the frontend records (zshard.module_classes), and the step has none; give module path patterns instead}}
module {
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "h.0.w", zshard.init = #zshard.init<zeros>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "h.0.w"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %l = tensor.from_elements %c0 : tensor<f32> loc("")
  return %l, %a : tensor<f32>, tensor<4xf32> loc("")
}
}

// -----

module {
// expected-error@+1 {{zshard.module_classes: the class of module 'h.0' must be a non-empty string}}
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "h.0.w", zshard.init = #zshard.init<zeros>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "h.0.w"})
    attributes {zshard.step, zshard.module_classes = {"h.0" = 3 : i32}} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %l = tensor.from_elements %c0 : tensor<f32> loc("")
  return %l, %a : tensor<f32>, tensor<4xf32> loc("")
}
}
