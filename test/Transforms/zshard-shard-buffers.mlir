// RUN: zshard-opt %S/Inputs/buffer-step.mlir --zshard-form-units="policy=explicit units=fc=fc.weight ranks=2 strategy=full_shard" --zshard-shard | FileCheck %s --check-prefix=SHARD
// RUN: zshard-opt %S/Inputs/buffer-step.mlir --zshard-remat="pattern=fc" --zshard-form-units="policy=explicit units=fc=fc.weight ranks=2 strategy=full_shard" --zshard-shard --zshard-offload | FileCheck %s --check-prefix=ALL
// RUN: zshard-compile %S/Inputs/buffer-step.mlir --strategy full_shard --ranks 2 --wrap transformer=fc --emit=memory-plan | FileCheck %s --check-prefix=PLAN
// RUN: zshard-compile %S/Inputs/buffer-step.mlir --strategy full_shard --ranks 2 --wrap transformer=fc -o %t.zsa
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.zsa/manifest.json

// A buffer argument (docs/contract.md, "Roles"; Inputs/buffer-step.mlir reads
// the persistent buffer fc.scale in its forward and backward) is replicated:
// zshard-shard gathers and shards the unit's parameter but passes the buffer
// whole to the compute that reads it, and returns no update of it;
// zshard-remat and zshard-offload leave it as it is; the memory plan holds it
// in its own category, and the manifest records it.

// SHARD-LABEL: func.func @train_step(
// SHARD-SAME:    %[[S:[a-z0-9]+]]: tensor<4xf32> {zshard.init = #zshard.init<ones>, zshard.name = "fc.scale", zshard.persistent = true, zshard.role = #zshard.role<buffer>}
// SHARD-SAME:    zshard.role = #zshard.role<param_shard>
// SHARD-SAME:    -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<2xf32> {{{[^}]*}}zshard.role = #zshard.role<param_shard_out>
// SHARD-NOT:     fc.scale
// SHARD:         zshard.all_gather %{{.*}} unit @fc : tensor<2xf32> -> tensor<4xf32>
// SHARD:         linalg.generic {{.*}} ins(%{{.*}}, %[[S]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// SHARD:         linalg.generic {{.*}} ins(%[[S]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// SHARD-NOT:     zshard.all_gather %[[S]]
// SHARD-NOT:     zshard.reduce_scatter {{.*}} %[[S]]
// SHARD:         return

// ALL-LABEL: func.func @train_step(
// ALL-SAME:    %[[S:[a-z0-9]+]]: tensor<4xf32> {zshard.init = #zshard.init<ones>, zshard.name = "fc.scale", zshard.persistent = true, zshard.role = #zshard.role<buffer>}
// ALL-SAME:    zshard.name = "fc.exp_avg", zshard.placement = #zshard.placement<host>
// ALL-SAME:    -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<2xf32>
// ALL-NOT:     fc.scale
// ALL:         linalg.generic {{.*}} ins(%{{.*}}, %[[S]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)

// PLAN:      optimizer_state
// PLAN:      buffers 16 16 16

// MANIFEST: "init": "ones",
// MANIFEST-NEXT: "name": "fc.scale",
// MANIFEST-NEXT: "persistent": true,
// MANIFEST-NEXT: "role": "buffer",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 4
