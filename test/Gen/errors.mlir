// Tests that zshard-gen rejects impossible configurations and bad usage with
// one line on stderr and exit status 1, and writes nothing to stdout.

// RUN: not zshard-gen 2>&1 | FileCheck %s --check-prefix=NOMODEL
// NOMODEL: zshard-gen: error: expected a model, 'mlp', 'gpt' or 'llama' (see --help)

// RUN: not zshard-gen resnet 2>&1 | FileCheck %s --check-prefix=MODEL
// MODEL: zshard-gen: error: unknown model 'resnet', expected 'mlp', 'gpt' or 'llama'

// RUN: not zshard-gen gpt --layers 2 --d-model 30 --heads 4 --vocab 64 --seq 16 --batch 2 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: zshard-gen: error: gpt: --heads 4 does not divide --d-model 30

// RUN: not zshard-gen gpt --layers 0 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: zshard-gen: error: gpt: --layers must be positive, got 0

// RUN: not zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch -2 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: zshard-gen: error: gpt: --batch must be positive, got -2

// RUN: not zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: zshard-gen: error: gpt: missing --batch

// RUN: not zshard-gen gpt --layers 2 --d-model 4611686018427387904 --heads 4 --vocab 64 --seq 16 --batch 2 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: zshard-gen: error: gpt: the tensor wte [vocab, d-model] is too large: its size overflows int64

// RUN: not zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 3037000500 --batch 2 2>&1 | FileCheck %s --check-prefix=SCORES
// SCORES: zshard-gen: error: gpt: the tensor attention scores [batch*heads, seq, seq] is too large: its size overflows int64

// RUN: not zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 99999999999999999999 2>&1 | FileCheck %s --check-prefix=BIGINT
// BIGINT: zshard-gen: error: option --batch expects an integer, got '99999999999999999999'

// RUN: not zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 4294967296 --seq 4 --batch 1 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: zshard-gen: error: gpt: --vocab 4294967296 does not fit the i32 tokens

// RUN: not zshard-gen gpt --preset llama2-7b --layers 20000 2>&1 | FileCheck %s --check-prefix=LAYERS
// LAYERS: zshard-gen: error: gpt: --layers 20000 is more than zshard-gen writes (at most 10000)

// RUN: not zshard-gen gpt --frobnicate 3 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: zshard-gen: error: unknown option '--frobnicate'

// RUN: not zshard-gen gpt --widths 3,4 2>&1 | FileCheck %s --check-prefix=WRONGMODEL
// WRONGMODEL: zshard-gen: error: option --widths does not apply to model gpt

// RUN: not zshard-gen gpt --preset llama3 2>&1 | FileCheck %s --check-prefix=PRESET
// PRESET: zshard-gen: error: unknown --preset 'llama3', expected llama2-7b or llama2-70b

// RUN: not zshard-gen gpt --preset llama2-7b --heads 7 2>&1 | FileCheck %s --check-prefix=PRESETHEADS
// PRESETHEADS: zshard-gen: error: gpt: --heads 7 does not divide --d-model 4096

// RUN: not zshard-gen gpt --tied=yes 2>&1 | FileCheck %s --check-prefix=FLAGVALUE
// FLAGVALUE: zshard-gen: error: option --tied takes no value

// RUN: not zshard-gen mlp --widths 8,x --batch 2 2>&1 | FileCheck %s --check-prefix=WIDTHS
// WIDTHS: zshard-gen: error: option --widths expects an integer, got 'x'

// RUN: not zshard-gen mlp --widths 8 --batch 2 2>&1 | FileCheck %s --check-prefix=ONEWIDTH
// ONEWIDTH: zshard-gen: error: mlp: --widths needs at least two widths (d_0,d_1), got 1

// RUN: not zshard-gen mlp --widths 8,0,3 --batch 2 2>&1 | FileCheck %s --check-prefix=ZEROWIDTH
// ZEROWIDTH: zshard-gen: error: mlp: every width in --widths must be positive, got 0

// RUN: not zshard-gen mlp --widths 8,4 --batch 2 --loss l1 2>&1 | FileCheck %s --check-prefix=LOSS
// LOSS: zshard-gen: error: --loss must be mse or xent, got 'l1'

// RUN: not zshard-gen mlp --widths 8,4 --batch 2 --dtype f16 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: zshard-gen: error: --dtype must be f32 or bf16, got 'f16'

// RUN: not zshard-gen mlp --widths 8,4 --batch 2>&1 | FileCheck %s --check-prefix=NOVALUE
// NOVALUE: zshard-gen: error: option --batch expects a value

// RUN: not zshard-gen mlp --widths 8,4 --batch 2 --batch 3 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: zshard-gen: error: option --batch given twice

// RUN: not zshard-gen mlp --widths=8,4 --batch=2 extra 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: zshard-gen: error: unexpected argument 'extra'

// RUN: not zshard-gen mlp --widths 8,4 --batch 2 -o %t.missing-dir/step.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: zshard-gen: error: cannot write '{{.*}}step.mlir':

// Every error is exactly one line, and stdout stays empty.
// RUN: not zshard-gen gpt --layers 2 --d-model 30 --heads 4 --vocab 64 --seq 16 --batch 2 2>%t.err > %t.out
// RUN: wc -l < %t.err | FileCheck %s --check-prefix=ONELINE
// ONELINE: {{^}}1{{$}}
// RUN: wc -c < %t.out | FileCheck %s --check-prefix=EMPTY
// EMPTY: {{^}}0{{$}}

// The help text goes to stdout with exit status 0.
// RUN: zshard-gen --help | FileCheck %s --check-prefix=HELP
// HELP: usage:
// HELP: zshard-gen mlp --widths
// HELP: zshard-gen gpt --preset llama2-7b|llama2-70b

// RUN: not zshard-gen mlp --widths 4,3 --batch 2 --clip-grad-norm 0 2>&1 | FileCheck %s --check-prefix=CLIPZERO
// CLIPZERO: zshard-gen: error: --clip-grad-norm must be a positive finite number, got '0'

// RUN: not zshard-gen mlp --widths 4,3 --batch 2 --clip-grad-norm=inf 2>&1 | FileCheck %s --check-prefix=CLIPINF
// CLIPINF: zshard-gen: error: --clip-grad-norm must be a positive finite number, got 'inf'

// RUN: not zshard-gen mlp --widths 4,3 --batch 2 --clip-grad-norm one 2>&1 | FileCheck %s --check-prefix=CLIPTEXT
// CLIPTEXT: zshard-gen: error: --clip-grad-norm must be a positive finite number, got 'one'
