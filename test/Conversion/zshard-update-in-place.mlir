// RUN: zshard-opt %s --split-input-file --zshard-update-in-place --verify-diagnostics | FileCheck %s

// The fused AdamW-style update reads the parameter and its state and writes
// their updates elementwise through the same map: the updates go into the
// arguments' buffers, the temporaries and their copies go, and the
// out-parameters are marked in place. The loss is not state: its copy stays.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @adamw
// CHECK-SAME:  %[[W:[a-z0-9]+]]: memref<4xf32> {zshard.name = "w", zshard.role = #zshard.role<param>}
// CHECK-SAME:  %[[M:[a-z0-9]+]]: memref<4xf32> {zshard.name = "w.exp_avg", zshard.param = "w", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME:  %[[LOSS:[a-z0-9]+]]: memref<f32> {zshard.role = #zshard.role<loss>}
// CHECK-SAME:  %{{.*}}: memref<4xf32> {zshard.in_place, zshard.name = "w", zshard.role = #zshard.role<param_out>}
// CHECK-SAME:  %{{.*}}: memref<4xf32> {zshard.in_place, zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>}
// CHECK:       %[[L:.*]] = memref.alloc() : memref<f32>
// CHECK-NOT:   memref.alloc
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[W]], %{{[a-z0-9]+}}, %[[M]] :
// CHECK-SAME:  outs(%[[W]], %[[M]] :
// CHECK-NOT:   memref.dealloc
// CHECK:       memref.copy %[[L]], %[[LOSS]]
// CHECK-NOT:   memref.copy
// CHECK:       return
func.func @adamw(%w: memref<4xf32> {zshard.name = "w", zshard.role = #zshard.role<param>},
                 %m: memref<4xf32> {zshard.name = "w.exp_avg", zshard.param = "w", zshard.role = #zshard.role<opt_state>},
                 %g: memref<4xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>},
                 %loss: memref<f32> {zshard.role = #zshard.role<loss>},
                 %w_out: memref<4xf32> {zshard.name = "w", zshard.role = #zshard.role<param_out>},
                 %m_out: memref<4xf32> {zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>})
    attributes {zshard.step} {
  %l = memref.alloc() : memref<f32>
  %nw = memref.alloc() : memref<4xf32>
  %nm = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g, %m : memref<4xf32>, memref<4xf32>, memref<4xf32>)
      outs(%nw, %nm : memref<4xf32>, memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o0: f32, %o1: f32):
    %s = arith.subf %a, %b : f32
    %t = arith.addf %c, %b : f32
    linalg.yield %s, %t : f32, f32
  }
  memref.copy %l, %loss : memref<f32> to memref<f32>
  memref.dealloc %l : memref<f32>
  memref.copy %nw, %w_out : memref<4xf32> to memref<4xf32>
  memref.dealloc %nw : memref<4xf32>
  memref.copy %nm, %m_out : memref<4xf32> to memref<4xf32>
  memref.dealloc %nm : memref<4xf32>
  return
}

// -----

// The parameter is read after its update is written (a later op uses it):
// writing into it would change what that op reads, so the update keeps its
// temporary, and the final copy goes into the parameter instead of a
// second buffer. The state's out-parameter has two writers: it stays.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @read_after
// CHECK-SAME:  %[[W:[a-z0-9]+]]: memref<2x2xf32> {zshard.name = "w", zshard.role = #zshard.role<param>}
// CHECK-SAME:  {zshard.in_place, zshard.name = "w", zshard.role = #zshard.role<param_out>}
// CHECK-SAME:  %[[MOUT:[a-z0-9]+]]: memref<2x2xf32> {zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>}
// CHECK:       %[[NW:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK:       linalg.copy ins(%[[W]] : memref<2x2xf32>)
// CHECK-NEXT:  memref.copy %[[NW]], %[[W]]
// CHECK-NEXT:  memref.copy %{{.*}}, %[[MOUT]]
func.func @read_after(%w: memref<2x2xf32> {zshard.name = "w", zshard.role = #zshard.role<param>},
                      %m: memref<2x2xf32> {zshard.name = "w.exp_avg", zshard.param = "w", zshard.role = #zshard.role<opt_state>},
                      %loss: memref<f32> {zshard.role = #zshard.role<loss>},
                      %w_out: memref<2x2xf32> {zshard.name = "w", zshard.role = #zshard.role<param_out>},
                      %m_out: memref<2x2xf32> {zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>})
    attributes {zshard.step} {
  %nw = memref.alloc() : memref<2x2xf32>
  %nm = memref.alloc() : memref<2x2xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<2x2xf32>) outs(%nw : memref<2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<2x2xf32>) outs(%nm : memref<2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.copy ins(%w : memref<2x2xf32>) outs(%m_out : memref<2x2xf32>)
  memref.copy %nw, %w_out : memref<2x2xf32> to memref<2x2xf32>
  memref.copy %nm, %m_out : memref<2x2xf32> to memref<2x2xf32>
  return
}

// -----

// An asynchronous collective reads the state until its wait: an update
// written before the wait must not go into the state's buffer. It keeps
// its temporary, copied into the state after the wait.
#id3 = affine_map<(d0) -> (d0)>
func.func private @zshard_rt_step_all_gather_start(i64, !llvm.ptr, !llvm.ptr, i64, i32) -> i64
func.func private @zshard_rt_step_wait(i64)
// CHECK-LABEL: func.func @async_read
// CHECK-SAME:  %[[M:[a-z0-9]+]]: memref<4xf32> {zshard.name = "w.exp_avg"
// CHECK-SAME:  {zshard.in_place, zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>}
// CHECK:       %[[NM:.*]] = memref.alloc() : memref<4xf32>
// CHECK:       call @zshard_rt_step_wait
// CHECK-NEXT:  memref.copy %[[NM]], %[[M]]
func.func @async_read(%m: memref<4xf32> {zshard.name = "w.exp_avg", zshard.param = "w", zshard.role = #zshard.role<opt_state>, zshard.placement = #zshard.placement<host>},
                      %gathered: memref<8xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>},
                      %m_out: memref<4xf32> {zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>})
    attributes {zshard.step} {
  %c0 = arith.constant 0 : i64
  %c4 = arith.constant 4 : i64
  %k = arith.constant 0 : i32
  %i = memref.extract_aligned_pointer_as_index %m : memref<4xf32> -> index
  %i64 = arith.index_cast %i : index to i64
  %p = llvm.inttoptr %i64 : i64 to !llvm.ptr
  %h = func.call @zshard_rt_step_all_gather_start(%c0, %p, %p, %c4, %k) : (i64, !llvm.ptr, !llvm.ptr, i64, i32) -> i64
  %nm = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel"]}
      ins(%m : memref<4xf32>) outs(%nm : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  func.call @zshard_rt_step_wait(%h) : (i64) -> ()
  memref.copy %nm, %m_out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Bufferization already wrote the update into the argument (arguments are
// writable) and only copies it out: the copy goes.
#id4 = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @already_in_place
// CHECK-SAME:  {zshard.in_place, zshard.name = "w", zshard.role = #zshard.role<param_out>}
// CHECK-NOT:   memref.copy
func.func @already_in_place(%w: memref<4xf32> {zshard.name = "w", zshard.role = #zshard.role<param>},
                            %w_out: memref<4xf32> {zshard.name = "w", zshard.role = #zshard.role<param_out>})
    attributes {zshard.step} {
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel"]} outs(%w : memref<4xf32>) {
  ^bb0(%o: f32):
    %t = arith.addf %o, %o : f32
    linalg.yield %t : f32
  }
  memref.copy %w, %w_out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The optimizer on a flat shard (2 ranks, 4 elements each, of a unit whose
// members are elements [0, 3) and [3, 8)): each member reads its slice of
// the shard, the new shard starts as a copy of the old, and each member's
// update is copied into its slice. Evaluated on both ranks the members'
// slices never overlap, so no read of the shard follows a write of the same
// elements: the new shard is the old one, updated in place.
#id5 = affine_map<(d0) -> (d0)>
func.func private @zshard_rt_step_grid_coord(i32) -> i64
// CHECK-LABEL: func.func @flat_shard
// CHECK-SAME:  %[[W:[a-z0-9]+]]: memref<4xf32> {zshard.name = "u", zshard.role = #zshard.role<param_shard>}
// CHECK-SAME:  {zshard.in_place, zshard.name = "u", zshard.role = #zshard.role<param_shard_out>}
// CHECK-NOT:   memref.alloc() : memref<4xf32>
// CHECK-NOT:   memref.copy %[[W]]
// CHECK:       memref.subview %[[W]]
// CHECK:       memref.subview %[[W]]
// CHECK:       memref.subview %[[W]]
// CHECK:       memref.subview %[[W]]
// CHECK-NOT:   memref.copy %{{.*}}, %arg
func.func @flat_shard(%w: memref<4xf32> {zshard.name = "u", zshard.role = #zshard.role<param_shard>},
                      %w_out: memref<4xf32> {zshard.name = "u", zshard.role = #zshard.role<param_shard_out>})
    attributes {zshard.step} {
  %c0_i32 = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %r = func.call @zshard_rt_step_grid_coord(%c0_i32) {zshard.axis_size = 2 : i64} : (i32) -> i64
  %ri = arith.index_cast %r : i64 to index
  %s = arith.muli %ri, %c4 : index
  // Member 1: [0, 3) - s, clamped to [0, 4).
  %b1 = arith.subi %c0, %s : index
  %b1a = arith.maxsi %b1, %c0 : index
  %off1 = arith.minsi %b1a, %c4 : index
  %e1 = arith.subi %c3, %s : index
  %e1a = arith.maxsi %e1, %c0 : index
  %end1 = arith.minsi %e1a, %c4 : index
  %n1 = arith.subi %end1, %off1 : index
  // Member 2: [3, 8) - s.
  %b2 = arith.subi %c3, %s : index
  %b2a = arith.maxsi %b2, %c0 : index
  %off2 = arith.minsi %b2a, %c4 : index
  %e2 = arith.subi %c8, %s : index
  %e2a = arith.maxsi %e2, %c0 : index
  %end2 = arith.minsi %e2a, %c4 : index
  %n2 = arith.subi %end2, %off2 : index
  %a1 = memref.subview %w[%off1] [%n1] [1] : memref<4xf32> to memref<?xf32, strided<[1], offset: ?>>
  %t1 = memref.alloc(%n1) : memref<?xf32>
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
      ins(%a1 : memref<?xf32, strided<[1], offset: ?>>) outs(%t1 : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %x : f32
    linalg.yield %y : f32
  }
  %u = memref.alloc() : memref<4xf32>
  memref.copy %w, %u : memref<4xf32> to memref<4xf32>
  %u1 = memref.subview %u[%off1] [%n1] [1] : memref<4xf32> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %t1, %u1 : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %a2 = memref.subview %w[%off2] [%n2] [1] : memref<4xf32> to memref<?xf32, strided<[1], offset: ?>>
  %t2 = memref.alloc(%n2) : memref<?xf32>
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
      ins(%a2 : memref<?xf32, strided<[1], offset: ?>>) outs(%t2 : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  %u2 = memref.subview %u[%off2] [%n2] [1] : memref<4xf32> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %t2, %u2 : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %u, %w_out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The same with members that overlap ([0, 3) and [2, 8)): on rank 0 member
// 2 reads element 2 after member 1's update of it was written, so updating
// in place would change what it reads. The new shard keeps its buffer, and
// the final copy goes into the shard instead of a second shard buffer.
#id6 = affine_map<(d0) -> (d0)>
func.func private @zshard_rt_step_grid_coord(i32) -> i64
// CHECK-LABEL: func.func @overlapping_slices
// CHECK-SAME:  %[[W:[a-z0-9]+]]: memref<4xf32> {zshard.name = "u", zshard.role = #zshard.role<param_shard>}
// CHECK-SAME:  {zshard.in_place, zshard.name = "u", zshard.role = #zshard.role<param_shard_out>}
// CHECK:       %[[U:.*]] = memref.alloc() : memref<4xf32>
// CHECK:       memref.copy %[[W]], %[[U]]
// CHECK:       memref.copy %[[U]], %[[W]]
// CHECK-NEXT:  return
func.func @overlapping_slices(%w: memref<4xf32> {zshard.name = "u", zshard.role = #zshard.role<param_shard>},
                              %w_out: memref<4xf32> {zshard.name = "u", zshard.role = #zshard.role<param_shard_out>})
    attributes {zshard.step} {
  %c0_i32 = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %r = func.call @zshard_rt_step_grid_coord(%c0_i32) {zshard.axis_size = 2 : i64} : (i32) -> i64
  %ri = arith.index_cast %r : i64 to index
  %s = arith.muli %ri, %c4 : index
  %b1 = arith.subi %c0, %s : index
  %off1 = arith.maxsi %b1, %c0 : index
  %e1 = arith.subi %c3, %s : index
  %end1 = arith.maxsi %e1, %c0 : index
  %n1 = arith.subi %end1, %off1 : index
  %b2 = arith.subi %c2, %s : index
  %off2 = arith.maxsi %b2, %c0 : index
  %n2 = arith.subi %c4, %off2 : index
  %u = memref.alloc() : memref<4xf32>
  memref.copy %w, %u : memref<4xf32> to memref<4xf32>
  %a1 = memref.subview %w[%off1] [%n1] [1] : memref<4xf32> to memref<?xf32, strided<[1], offset: ?>>
  %u1 = memref.subview %u[%off1] [%n1] [1] : memref<4xf32> to memref<?xf32, strided<[1], offset: ?>>
  linalg.generic {indexing_maps = [#id6, #id6], iterator_types = ["parallel"]}
      ins(%a1 : memref<?xf32, strided<[1], offset: ?>>) outs(%u1 : memref<?xf32, strided<[1], offset: ?>>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %x : f32
    linalg.yield %y : f32
  }
  %a2 = memref.subview %w[%off2] [%n2] [1] : memref<4xf32> to memref<?xf32, strided<[1], offset: ?>>
  %u2 = memref.subview %u[%off2] [%n2] [1] : memref<4xf32> to memref<?xf32, strided<[1], offset: ?>>
  linalg.generic {indexing_maps = [#id6, #id6], iterator_types = ["parallel"]}
      ins(%a2 : memref<?xf32, strided<[1], offset: ?>>) outs(%u2 : memref<?xf32, strided<[1], offset: ?>>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  memref.copy %u, %w_out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Offloaded state that is read after the step's last copy can be updated
// neither in place nor by copying into it: the lowering says so, as the
// update then passes through device memory.
#id7 = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @read_last
// CHECK-NOT:   zshard.in_place
// expected-warning @+1 {{offloaded 'w.exp_avg' is updated through a temporary in device memory: the step reads it after its update}}
func.func @read_last(%m: memref<4xf32> {zshard.name = "w.exp_avg", zshard.param = "w", zshard.role = #zshard.role<opt_state>, zshard.placement = #zshard.placement<host>},
                     %x: memref<4xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>},
                     %m_out: memref<4xf32> {zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>})
    attributes {zshard.step} {
  %nm = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id7, #id7], iterator_types = ["parallel"]}
      ins(%m : memref<4xf32>) outs(%nm : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.copy %nm, %m_out : memref<4xf32> to memref<4xf32>
  linalg.copy ins(%m : memref<4xf32>) outs(%x : memref<4xf32>)
  return
}

// -----

// Tests that the step's ABI record (zshard-record-abi) is kept current: the
// results written into their arguments are recorded in_place, the loss,
// which is not state, is not.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: module attributes {zshard.abi = #zshard.step_abi<step = "recorded"
// CHECK-SAME:  results = [#zshard.abi_result<role = loss, type = tensor<f32>>,
// CHECK-SAME:  #zshard.abi_result<role = param_out, name = "w", type = tensor<4xf32>, in_place = true>,
// CHECK-SAME:  #zshard.abi_result<role = opt_state_out, name = "w.exp_avg", type = tensor<4xf32>, in_place = true>]
// CHECK-LABEL: func.func @recorded
module attributes {zshard.abi = #zshard.step_abi<step = "recorded",
    arguments = [#zshard.abi_argument<role = param, name = "w", type = tensor<4xf32>>,
                 #zshard.abi_argument<role = opt_state, name = "w.exp_avg", type = tensor<4xf32>, param = "w">,
                 #zshard.abi_argument<role = batch, name = "x", type = tensor<4xf32>>],
    results = [#zshard.abi_result<role = loss, type = tensor<f32>>,
               #zshard.abi_result<role = param_out, name = "w", type = tensor<4xf32>>,
               #zshard.abi_result<role = opt_state_out, name = "w.exp_avg", type = tensor<4xf32>>],
    units = [], ranks = 1>} {
func.func @recorded(%w: memref<4xf32> {zshard.name = "w", zshard.role = #zshard.role<param>},
                    %m: memref<4xf32> {zshard.name = "w.exp_avg", zshard.param = "w", zshard.role = #zshard.role<opt_state>},
                    %g: memref<4xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>},
                    %loss: memref<f32> {zshard.role = #zshard.role<loss>},
                    %w_out: memref<4xf32> {zshard.name = "w", zshard.role = #zshard.role<param_out>},
                    %m_out: memref<4xf32> {zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>})
    attributes {zshard.step} {
  %l = memref.alloc() : memref<f32>
  %nw = memref.alloc() : memref<4xf32>
  %nm = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g, %m : memref<4xf32>, memref<4xf32>, memref<4xf32>)
      outs(%nw, %nm : memref<4xf32>, memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o0: f32, %o1: f32):
    %s = arith.subf %a, %b : f32
    %t = arith.addf %c, %b : f32
    linalg.yield %s, %t : f32, f32
  }
  memref.copy %l, %loss : memref<f32> to memref<f32>
  memref.dealloc %l : memref<f32>
  memref.copy %nw, %w_out : memref<4xf32> to memref<4xf32>
  memref.dealloc %nw : memref<4xf32>
  memref.copy %nm, %m_out : memref<4xf32> to memref<4xf32>
  memref.dealloc %nm : memref<4xf32>
  return
}
}
