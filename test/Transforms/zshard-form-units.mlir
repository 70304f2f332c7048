// RUN: zshard-gen gpt --layers 2 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 1 --tied \
// RUN:   | zshard-opt --zshard-form-units="ranks=3" | FileCheck %s --check-prefix=XFMR
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="policy=size min-params=30 ranks=4 strategy=shard_grad_op" \
// RUN:   | FileCheck %s --check-prefix=SIZE
// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 1 \
// RUN:   | zshard-opt --zshard-form-units="policy=explicit units=emb=wte,wpe;head=lm_head.weight ranks=4 replicas=2 strategy=hybrid_shard reduce-type=bf16" \
// RUN:   | FileCheck %s --check-prefix=EXPL
// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 1 \
// RUN:   | not zshard-opt --zshard-form-units="policy=explicit units=emb=wte,wpe;x=wte" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TWICE
// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 1 \
// RUN:   | not zshard-opt --zshard-form-units="policy=explicit units=emb=wtf" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="strategy=quarter_shard" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="ranks=4 replicas=3 strategy=hybrid_shard" 2>&1 | FileCheck %s --check-prefix=REPLICAS
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="policy=fancy" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=layers.<i>" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOMATCH --implicit-check-not=error: --implicit-check-not=note:
// RUN: sed 's/fc\.0/transformer.h.0/g' %S/Inputs/contract-step.mlir \
// RUN:   | not zshard-opt --zshard-form-units 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXPORTED --implicit-check-not=error: --implicit-check-not=note:
// RUN: sed 's/fc\.0/h.0.experts.1/g' %S/Inputs/contract-step.mlir \
// RUN:   | not zshard-opt --zshard-form-units="pattern=layers.<i>" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NESTED --implicit-check-not=error: --implicit-check-not=note:
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i>" \
// RUN:   | not zshard-opt --zshard-form-units 2>&1 | FileCheck %s --check-prefix=AGAIN

// Tests that the transformer policy makes one unit per h.<i> block and puts
// the rest (embeddings, final LayerNorm) in @root; that the tied embedding is
// one member; that offsets are contiguous in argument order and the padded
// size is the extent rounded up to a multiple of the 3 ranks.
// XFMR:      shard.grid @world(shape = 3)
// XFMR-NEXT: zshard.unit @root on @world[0] full_shard padded(177) param(f32) reduce(f32) [
// XFMR-NEXT:   "wte" : 16x8 at 0,
// XFMR-NEXT:   "wpe" : 4x8 at 128,
// XFMR-NEXT:   "ln_f.weight" : 8 at 160,
// XFMR-NEXT:   "ln_f.bias" : 8 at 168
// XFMR-NEXT: ]
// XFMR-NEXT: zshard.unit @h.0 on @world[0] full_shard padded(873)
// XFMR-NEXT:   "h.0.ln_1.weight" : 8 at 0,
// XFMR-NEXT:   "h.0.ln_1.bias" : 8 at 8,
// XFMR-NEXT:   "h.0.attn.c_attn.weight" : 8x24 at 16,
// XFMR:      zshard.unit @h.1 on @world[0] full_shard padded(873)
// XFMR-NOT:  lm_head
// XFMR:      func.func @train_step(
// XFMR-SAME:   zshard.name = "wte", zshard.role = #zshard.role<param>, zshard.unit = @root}
// XFMR-SAME:   zshard.name = "h.0.ln_1.weight", zshard.role = #zshard.role<param>, zshard.unit = @h.0}
// XFMR-SAME:   zshard.name = "ln_f.bias", zshard.role = #zshard.role<param>, zshard.unit = @root}
// XFMR-SAME:   zshard.name = "wte.exp_avg", zshard.param = "wte", zshard.role = #zshard.role<opt_state>}

// Tests that the size policy closes a unit once it holds min-params elements.
// SIZE:      shard.grid @world(shape = 4)
// SIZE-NEXT: zshard.unit @unit0 on @world[0] shard_grad_op padded(32) param(f32) reduce(f32) [
// SIZE-NEXT:   "fc.0.weight" : 4x6 at 0,
// SIZE-NEXT:   "fc.0.bias" : 6 at 24
// SIZE-NEXT: ]
// SIZE-NEXT: zshard.unit @unit1 on @world[0] shard_grad_op padded(24) param(f32) reduce(f32) [
// SIZE-NEXT:   "fc.1.weight" : 6x3 at 0,
// SIZE-NEXT:   "fc.1.bias" : 3 at 18
// SIZE-NEXT: ]

// Tests the explicit policy on a hybrid grid: units in the order given, the
// rest in @root, a 2x2 grid sharded on axis 1 and replicated on axis 0, and
// gradients reduced in bf16.
// EXPL:      shard.grid @world(shape = 2x2)
// EXPL-NEXT: zshard.unit @emb on @world[1] replicate [0] hybrid_shard padded(160) param(f32) reduce(bf16) [
// EXPL-NEXT:   "wte" : 16x8 at 0,
// EXPL-NEXT:   "wpe" : 4x8 at 128
// EXPL-NEXT: ]
// EXPL-NEXT: zshard.unit @head on @world[1] replicate [0] hybrid_shard padded(128) param(f32) reduce(bf16) [
// EXPL-NEXT:   "lm_head.weight" : 8x16 at 0
// EXPL-NEXT: ]
// EXPL-NEXT: zshard.unit @root on @world[1] replicate [0] hybrid_shard

// Tests the diagnostics.
// TWICE: {{^}}zshard-gen:0:0: error: zshard-form-units: parameter 'wte' is listed in units 'emb' and 'x'; a parameter lives in one unit
// UNKNOWN: {{^}}zshard-gen:0:0: error: zshard-form-units: unit 'emb' names unknown parameter 'wtf'
// STRATEGY: for the --strategy option: 'quarter_shard' is not one of no_shard, zero1, shard_grad_op, full_shard, hybrid_shard, hybrid_shard_zero2
// REPLICAS: {{^}}{{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-form-units: replicas (3) must divide ranks (4)
// POLICY: for the --policy option: 'fancy' is not one of transformer, size, explicit
// NOMATCH: {{^}}{{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-form-units: pattern 'layers.<i>' matches no parameter; every parameter would land in @root (the step's repeated blocks are fc.<i>; or use policy=size){{$}}
// EXPORTED: {{^}}<stdin>:0:0: error: zshard-form-units: pattern 'h.<i>' matches no parameter; every parameter would land in @root (the step's repeated blocks are transformer.h.<i>; or use policy=size){{$}}
// NESTED: {{^}}<stdin>:0:0: error: zshard-form-units: pattern 'layers.<i>' matches no parameter; every parameter would land in @root (the step's repeated blocks are h.<i>, h.<i>.experts.<i>; or use policy=size){{$}}
// AGAIN: {{^}}{{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-form-units: the module already has units; form them once

// Per-unit reshard-after-forward: the units named in no-reshard keep their
// forward gather until backward (full_shard -> shard_grad_op, hybrid_shard
// -> hybrid_shard_zero2); the others keep the strategy asked for.
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard no-reshard=fc.2,fc.0" | FileCheck %s --check-prefix=KEEP
// KEEP: zshard.unit @fc.0 on @world[0] shard_grad_op
// KEEP: zshard.unit @fc.1 on @world[0] full_shard
// KEEP: zshard.unit @fc.2 on @world[0] shard_grad_op
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=4 replicas=2 strategy=hybrid_shard no-reshard=fc.1" | FileCheck %s --check-prefix=KEEPH
// KEEPH: zshard.unit @fc.0 on @world[1] replicate [0] hybrid_shard padded
// KEEPH: zshard.unit @fc.1 on @world[1] replicate [0] hybrid_shard_zero2 padded
// RUN: not zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard no-reshard=fc.7" 2>&1 | FileCheck %s --check-prefix=KEEPBAD
// KEEPBAD: {{^}}{{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-form-units: no-reshard names 'fc.7', which is not a unit
// RUN: not zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=zero1 no-reshard=fc.1" 2>&1 | FileCheck %s --check-prefix=KEEPZ1
// KEEPZ1: {{^}}{{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-form-units: no-reshard applies to full_shard and hybrid_shard, not zero1
