// RUN: zshard-compile %S/../Transforms/Inputs/buffer-step.mlir --strategy full_shard --ranks 2 --wrap transformer=fc --buffer-dtype bf16 -o %t.zsa
// RUN: FileCheck %s --check-prefix=WRITTEN < %t.zsa/manifest.json
// RUN: zshard-rt-manifest-roundtrip %t.zsa | FileCheck %s --check-prefix=READ
// RUN: nm -D --undefined-only %t.zsa/step.so | FileCheck %s --check-prefix=SYMS
// RUN: zshard-compile %S/../Transforms/Inputs/buffer-step.mlir --strategy full_shard --ranks 2 --wrap transformer=fc -o %t-own.zsa
// RUN: FileCheck %s --check-prefix=OWN < %t-own.zsa/manifest.json
// RUN: zshard-rt-manifest-roundtrip %t-own.zsa | FileCheck %s --check-prefix=READ

// The rounding of the buffer to bf16 is integer code (zshard-expand-bf16):
// the step needs no __truncsfbf2, which a CPU without AVX512-BF16 would call
// and Debian 12's libgcc does not have (the step.so would not load).
// SYMS-NOT: __truncsfbf2
// SYMS: zshard_rt_
// SYMS-NOT: __truncsfbf2

// A unit's buffer(T) is the manifest unit's "buffer_dtype" (written only
// when the unit has one), and the runtime reads it back with every other
// field, the buffer argument's "persistent" included; the buffer itself
// stays an f32 argument.

// WRITTEN: "dtype": "f32",
// WRITTEN-NEXT: "index": 0,
// WRITTEN-NEXT: "init": "ones",
// WRITTEN-NEXT: "name": "fc.scale",
// WRITTEN-NEXT: "persistent": true,
// WRITTEN-NEXT: "role": "buffer",
// WRITTEN: "units": [
// WRITTEN: "buffer_dtype": "bf16",
// WRITTEN-NEXT: "members": [

// OWN: "units": [
// OWN-NOT: "buffer_dtype"

// READ: round-trip: {{[0-9]+}} arguments, {{[0-9]+}} results, 1 units, grid world, signature {{[0-9a-f]{16}$}}
