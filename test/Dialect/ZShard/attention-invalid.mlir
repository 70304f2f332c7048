// RUN: zshard-opt %s -split-input-file -verify-diagnostics

// Tests one diagnostic for every verifier rule of zshard.causal_attention
// and zshard.causal_attention_grad.

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'zshard.causal_attention' op k 'tensor<1x2x4x8xf32>' and v 'tensor<1x2x4x4xf32>' must have the same type}}
  %o, %l = zshard.causal_attention %q, %k, %v scale(0.5) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
  return
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{'zshard.causal_attention' op k 'tensor<1x2x5x8xf32>' must have the batch, sequence and head size of q 'tensor<1x2x4x8xf32>'}}
  %o, %l = zshard.causal_attention %q, %k, %k scale(0.5) : tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>
  return
}

// -----

func.func @f(%q: tensor<1x6x4x8xf32>, %k: tensor<1x4x4x8xf32>) {
  // expected-error @+1 {{'zshard.causal_attention' op the 6 heads of q must be a multiple of the 4 kv heads}}
  %o, %l = zshard.causal_attention %q, %k, %k scale(0.5) : tensor<1x6x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
  return
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'zshard.causal_attention' op scale must be finite and positive, got -5.000000e-01}}
  %o, %l = zshard.causal_attention %q, %q, %q scale(-0.5) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
  return
}

// -----

func.func @f(%q: tensor<1x2x?x8xf32>) {
  // expected-error @+1 {{'zshard.causal_attention' op q must have a static shape, got 'tensor<1x2x?x8xf32>'}}
  %o, %l = zshard.causal_attention %q, %q, %q scale(0.5) : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
  return
}

// -----

func.func @f(%q: tensor<1x2x4x8xbf16>) {
  // expected-error @+1 {{'zshard.causal_attention' op operand #0 must be 4D tensor of 32-bit float values}}
  %o, %l = zshard.causal_attention %q, %q, %q scale(0.5) : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x4xf32>, %l: tensor<1x2x4xf32>) {
  // expected-error @+1 {{'zshard.causal_attention_grad' op out 'tensor<1x2x4x4xf32>' must have the type of q 'tensor<1x2x4x8xf32>'}}
  %dq, %dk, %dv = "zshard.causal_attention_grad"(%q, %q, %q, %o, %l, %q) {scale = 0.5 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %d: tensor<2x2x4x8xf32>, %l: tensor<1x2x4xf32>) {
  // expected-error @+1 {{'zshard.causal_attention_grad' op dout 'tensor<2x2x4x8xf32>' must have the type of q 'tensor<1x2x4x8xf32>'}}
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %q, %q, %q, %l, %d scale(0.5) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<2x2x4x8xf32>
  return
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %l: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'zshard.causal_attention_grad' op lse 'tensor<1x2x8xf32>' must be 'tensor<1x2x4xf32>'}}
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %q, %q, %q, %l, %q scale(0.5) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x8xf32>, tensor<1x2x4x8xf32>
  return
}
