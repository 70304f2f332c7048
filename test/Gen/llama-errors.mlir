// Tests that `zshard-gen llama` rejects impossible configurations with one
// line on stderr and exit status 1.

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 6 --kv-heads 4 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 2>&1 | FileCheck %s --check-prefix=KV
// KV: zshard-gen: error: llama: --kv-heads 4 does not divide --heads 6{{$}}

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 4 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 2>&1 | FileCheck %s --check-prefix=ODD
// ODD: zshard-gen: error: llama: the head dim (--d-model / --heads = 3) must be even for the rotary embeddings{{$}}

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 5 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: zshard-gen: error: llama: --heads 5 does not divide --d-model 12{{$}}

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 6 --kv-heads 0 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: zshard-gen: error: llama: --kv-heads must be positive, got 0{{$}}

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 6 --vocab 17 --seq 4 --batch 2 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: zshard-gen: error: llama: missing --ffn-hidden{{$}}

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 6 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 --rope-theta 0.5 2>&1 | FileCheck %s --check-prefix=THETA
// THETA: zshard-gen: error: llama: --rope-theta must be a finite number above 1{{$}}

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 6 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 --rope-theta ten 2>&1 | FileCheck %s --check-prefix=THETATEXT
// THETATEXT: zshard-gen: error: --rope-theta expects a number, got 'ten'{{$}}

// RUN: not zshard-gen llama --preset llama3-70b 2>&1 | FileCheck %s --check-prefix=PRESET
// PRESET: zshard-gen: error: unknown --preset 'llama3-70b', expected llama2-7b, llama2-70b or llama3-8b{{$}}

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 6 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 --tied 2>&1 | FileCheck %s --check-prefix=TIED
// TIED: zshard-gen: error: option --tied does not apply to model llama{{$}}

// RUN: not zshard-gen gpt --layers 2 --d-model 12 --heads 6 --vocab 17 --seq 4 --batch 2 --kv-heads 2 2>&1 | FileCheck %s --check-prefix=GPTKV
// GPTKV: zshard-gen: error: option --kv-heads does not apply to model gpt{{$}}

// RUN: not zshard-gen llama --layers 2 --d-model 12 --heads 6 --ffn-hidden 4611686018427387904 --vocab 17 --seq 4 --batch 2 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: zshard-gen: error: llama: the tensor gate_proj.weight [ffn-hidden, d-model] is too large: its size overflows int64{{$}}
