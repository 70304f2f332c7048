// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 -o %t.mlir
// RUN: not zshard-compile %t.mlir --ranks 4 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=RANKS
// RUN: not zshard-compile %t.mlir --strategy full_shard --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=NORANKS
// RUN: not zshard-compile %t.mlir --auto --memory-per-rank 1GiB --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=AUTORANKS
// RUN: not zshard-compile %t.mlir --auto --ranks 2 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=AUTOMEM
// RUN: not zshard-compile %t.mlir --auto --ranks 2 --memory-per-rank 1GiB --strategy zero1 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=AUTOSTRAT
// RUN: not zshard-compile %t.mlir --auto --ranks 2 --memory-per-rank 1GiB --remat all --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=AUTOREMAT
// RUN: not zshard-compile %t.mlir --memory-per-rank 1GiB --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=MEMONLY
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 0 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=ZERO
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks -2 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=NEGATIVE
// RUN: not zshard-compile %t.mlir --strategy ZERO3 --ranks 2 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=BADSTRAT
// RUN: not zshard-compile %t.mlir --strategy full_shard --strategy zero1 --ranks 2 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=TWICE
// RUN: not zshard-compile %t.mlir -o %t.a.zsa -o %t.b.zsa --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=OTWICE
// RUN: not zshard-compile %t.mlir -O3 -O2 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=OPTTWICE
// RUN: not zshard-compile %t.mlir -O9 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=O9
// RUN: not zshard-compile %t.mlir -mcpu=bogus --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=MCPU
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 4 --replicas 2 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=NOTHYBRID
// RUN: not zshard-compile %t.mlir --strategy hybrid_shard --ranks 4 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=NOREPLICAS
// RUN: not zshard-compile %t.mlir --strategy HYBRID_SHARD --ranks 4 --replicas 3 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=DIVIDE
// RUN: not zshard-compile %t.mlir --wrap size=100 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=WRAPALONE
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --wrap blocks --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=WRAP
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --wrap size=0 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=WRAPSIZE
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 '--wrap=transformer=layers.<i>' --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=PATTERN
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 '--wrap=transformer=h.<i' --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=BADPATTERN
// RUN: not zshard-compile %t.mlir --auto --ranks 2 --memory-per-rank 1GiB '--auto-pattern=model.layers.<i>' --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=AUTOPATTERN
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --prefetch depth=2 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=PREFETCH
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --prefetch backward=sideways --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=BACKWARD
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --prefetch forward-depth=-1 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=DEPTH
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --remat some --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=REMAT
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --remat every=0 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=EVERY
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --remat budget=lots --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=BUDGET
// RUN: not zshard-compile %t.mlir --emit=sharded-mlir 2>&1 | FileCheck %s --match-full-lines --check-prefix=SHARDEDEMIT
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 2 --emit=sharded-mlir -o %t.sharded.mlir
// RUN: not zshard-compile %t.sharded.mlir --strategy zero1 --ranks 2 2>&1 | FileCheck %s --match-full-lines --check-prefix=SHARDED
// RUN: not zshard-compile %t.sharded.mlir --auto --ranks 2 --memory-per-rank 1GiB 2>&1 | FileCheck %s --match-full-lines --check-prefix=SHARDED
// RUN: zshard-gen gpt --layers 1 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 | sed 's/"h\.0\./"h0./g' > %t.noblocks.mlir
// RUN: not zshard-compile %t.noblocks.mlir --strategy full_shard --ranks 2 --remat all 2>&1 | FileCheck %s --match-full-lines --check-prefix=NOBLOCKS
// RUN: zshard-compile %t.noblocks.mlir --strategy full_shard --ranks 2 --emit=sharded-mlir | FileCheck %s --check-prefix=ONEUNIT

// Tests that each misuse of zshard-compile's options is one line on stderr
// and a non-zero exit, before anything is compiled (or, for what only the
// step can tell, before it is sharded): options that need a strategy, a
// strategy or --auto without --ranks, out-of-range and repeated options,
// an -mcpu the target does not know, replicas that are not a hybrid's or
// do not divide the ranks, a wrap pattern that matches no parameter (the
// hint names the blocks the step has), and a step that is already sharded.
// RANKS: zshard-compile: error: --ranks needs --strategy (or --auto): without one the step is compiled as it is
// RANKS-NOT: {{.+}}
// NORANKS: zshard-compile: error: --strategy needs --ranks N (the ranks to shard over)
// NORANKS-NOT: {{.+}}
// AUTORANKS: zshard-compile: error: --auto needs --ranks N (the ranks to shard over)
// AUTORANKS-NOT: {{.+}}
// AUTOMEM: zshard-compile: error: --auto needs --memory-per-rank (a byte size such as 80GiB)
// AUTOMEM-NOT: {{.+}}
// AUTOSTRAT: zshard-compile: error: --auto chooses the strategy: give --auto or --strategy, not both
// AUTOSTRAT-NOT: {{.+}}
// AUTOREMAT: zshard-compile: error: --auto chooses the checkpointing: give --auto or --remat, not both
// AUTOREMAT-NOT: {{.+}}
// MEMONLY: zshard-compile: error: --memory-per-rank applies to --auto only
// MEMONLY-NOT: {{.+}}
// ZERO: zshard-compile: error: --ranks must be at least 1, got 0
// ZERO-NOT: {{.+}}
// NEGATIVE: zshard-compile: error: --ranks must be at least 1, got -2
// NEGATIVE-NOT: {{.+}}
// BADSTRAT: zshard-compile: for the --strategy option: 'ZERO3' is not a strategy: no_shard, zero1, shard_grad_op, full_shard, hybrid_shard, hybrid_shard_zero2 (or FSDP's NO_SHARD, ...)
// BADSTRAT-NOT: {{.+}}
// TWICE: zshard-compile: error: --strategy given more than once
// TWICE-NOT: {{.+}}
// OTWICE: zshard-compile: error: -o given more than once
// OTWICE-NOT: {{.+}}
// OPTTWICE: zshard-compile: error: -O given more than once
// OPTTWICE-NOT: {{.+}}
// O9: zshard-compile: error: -O9: the optimisation level is 0 to 3
// O9-NOT: {{.+}}
// MCPU: zshard-compile: error: -mcpu=bogus is not a CPU of {{.+}} (this machine's is {{.+}}, which -mcpu=native or no -mcpu compiles for)
// MCPU-NOT: {{.+}}
// NOTHYBRID: zshard-compile: error: --replicas applies to hybrid_shard and hybrid_shard_zero2 only
// NOTHYBRID-NOT: {{.+}}
// NOREPLICAS: zshard-compile: error: --strategy hybrid_shard needs --replicas R (the groups the ranks are split into)
// NOREPLICAS-NOT: {{.+}}
// DIVIDE: zshard-compile: error: --replicas 3 does not divide --ranks 4
// DIVIDE-NOT: {{.+}}
// WRAPALONE: zshard-compile: error: --wrap needs --strategy (or --auto): without one the step is compiled as it is
// WRAPALONE-NOT: {{.+}}
// WRAP: zshard-compile: error: --wrap takes transformer=PATTERN, transformer=CLASS or size=MIN_PARAMS, got 'blocks'
// WRAP-NOT: {{.+}}
// WRAPSIZE: zshard-compile: error: --wrap size=MIN_PARAMS takes a positive element count, got '0'
// WRAPSIZE-NOT: {{.+}}
// PATTERN: zshard-compile: error: --wrap transformer=layers.<i>: 'layers.<i>' matches no parameter of {{.+}}.mlir; its blocks are h.<i>; its module classes are Conv1D, GPT2Attention, GPT2Block, GPT2MLP, LayerNorm, Linear
// PATTERN-NOT: {{.+}}
// BADPATTERN: zshard-compile: error: --wrap transformer=h.<i: bad module path pattern 'h.<i' (dotted names, indices and <i>, such as h.<i>, or a module class; its blocks are h.<i>; its module classes are Conv1D, GPT2Attention, GPT2Block, GPT2MLP, LayerNorm, Linear)
// BADPATTERN-NOT: {{.+}}
// AUTOPATTERN: zshard-compile: error: --auto-pattern model.layers.<i>: 'model.layers.<i>' matches no parameter of {{.+}}.mlir; its blocks are h.<i>; its module classes are Conv1D, GPT2Attention, GPT2Block, GPT2MLP, LayerNorm, Linear
// AUTOPATTERN-NOT: {{.+}}
// PREFETCH: zshard-compile: error: --prefetch takes none or forward-depth=N, backward=pre|post|none, max-inflight=N, bucket-bytes=B; got 'depth=2'
// PREFETCH-NOT: {{.+}}
// BACKWARD: zshard-compile: error: --prefetch backward takes pre, post or none, got 'sideways'
// BACKWARD-NOT: {{.+}}
// DEPTH: zshard-compile: error: --prefetch forward-depth takes a non-negative integer, got '-1'
// DEPTH-NOT: {{.+}}
// REMAT: zshard-compile: error: --remat: unknown policy 'some'; expected none, all, every=K, selective or budget=BYTES
// REMAT-NOT: {{.+}}
// EVERY: zshard-compile: error: --remat: every=K needs a positive K, got '0'
// EVERY-NOT: {{.+}}
// BUDGET: zshard-compile: error: --remat: budget=BYTES needs a byte size such as 1048576 or 64MiB, got 'lots'
// BUDGET-NOT: {{.+}}
// SHARDEDEMIT: zshard-compile: error: --emit=sharded-mlir needs --strategy or --auto
// SHARDEDEMIT-NOT: {{.+}}
// SHARDED: zshard-compile: error: {{.+}}.sharded.mlir is already sharded (it declares zshard.unit @root): --strategy and --auto take an unsharded step
// SHARDED-NOT: {{.+}}

// A step without indexed blocks has nothing to checkpoint; sharded, it is
// one unit (as FSDP wraps a model without an auto-wrap policy).
// NOBLOCKS: zshard-compile: error: --remat needs blocks to checkpoint, and {{.+}}.noblocks.mlir has no indexed modules (such as h.<i>)
// NOBLOCKS-NOT: {{.+}}
// ONEUNIT:     zshard.unit @unit0 on @world[0] full_shard
// ONEUNIT-NOT: zshard.unit @
