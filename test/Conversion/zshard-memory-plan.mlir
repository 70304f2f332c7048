// RUN: zshard-opt %s --split-input-file --verify-diagnostics --zshard-memory-plan=report=%t.json
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: sed /expected-/d %s | not zshard-opt --split-input-file --zshard-memory-plan -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHORT --implicit-check-not="see current operation"
// RUN: sed /expected-/d %s | not zshard-opt --split-input-file --zshard-memory-plan=report=%t.missing/plan.json -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOREPORT
// NOREPORT: error: zshard-memory-plan: cannot open output file '{{.*}}.missing/plan.json': No such file or directory

// Tests that the remark prints its figures and where the peak is, not the
// step.
// SHORT: <stdin>:{{[0-9]+}}:1: remark: memory plan: peak 400 bytes: parameters 0 gradients 200 optimizer_state 0 activations 160 communication 0 other 40 host_offload 0 buffers 0
// SHORT: <stdin>:{{[0-9]+}}:8: note: the peak is reached here

// Tests the plan of a step walked in program order: each alloc charged to
// the category the last zshard_rt_step_set_alloc_category call chose
// (activations 3 by default), freed at its dealloc (of the buffer, not of a
// view); a dynamic size bounded by interval arithmetic over
// max(min(end, off + n) - max(begin, off), 0), which is at most n = 10
// whatever the unknown rank coordinate is. The peak is 200 + 160 + 40 bytes:
// gradients 200, activations 160 (%b, after %a was freed), other 40.
// JSON: "live_at_peak":{"activations":160,"buffers":0,"communication":0,"gradients":200,"host_offload":0,"optimizer_state":0,"other":40,"parameters":0}
// JSON-SAME: "peak":{"activations":160,"buffers":0,"communication":0,"gradients":200,"host_offload":0,"optimizer_state":0,"other":40,"parameters":0}
// JSON-SAME: "peak_total":400
func.func private @zshard_rt_step_set_alloc_category(i32)
func.func private @zshard_rt_step_grid_coord(i32) -> i64
// expected-remark @+1 {{memory plan: peak 400 bytes: parameters 0 gradients 200 optimizer_state 0 activations 160 communication 0 other 40 host_offload 0 buffers 0}}
func.func @step() {
  %a = memref.alloc() : memref<25xf32>
  memref.dealloc %a : memref<25xf32>
  %c1 = arith.constant 1 : i32
  call @zshard_rt_step_set_alloc_category(%c1) : (i32) -> ()
  %g = memref.alloc() : memref<50xf32>
  %c3 = arith.constant 3 : i32
  call @zshard_rt_step_set_alloc_category(%c3) : (i32) -> ()
  %b = memref.alloc() : memref<40xf32>
  %c5 = arith.constant 5 : i32
  call @zshard_rt_step_set_alloc_category(%c5) : (i32) -> ()
  %axis = arith.constant 0 : i32
  %coord = call @zshard_rt_step_grid_coord(%axis) : (i32) -> i64
  %rank = arith.index_cast %coord : i64 to index
  %c0 = arith.constant 0 : index
  %off = arith.constant 3 : index
  %offn = arith.constant 13 : index
  %s = arith.constant 16 : index
  %begin = arith.muli %rank, %s : index
  %end = arith.addi %begin, %s : index
  %lo = arith.maxsi %begin, %off : index
  %hi = arith.minsi %end, %offn : index
  %d = arith.subi %hi, %lo : index
  %len = arith.maxsi %d, %c0 : index
  // expected-note @+1 {{the peak is reached here}}
  %t = memref.alloc(%len) : memref<?xf32>
  %v = memref.subview %g[0] [10] [1] : memref<50xf32> to memref<10xf32, strided<[1]>>
  memref.dealloc %t : memref<?xf32>
  memref.dealloc %b : memref<40xf32>
  memref.dealloc %g : memref<50xf32>
  return
}

// -----

func.func private @zshard_rt_step_grid_coord(i32) -> i64
func.func @unbounded() {
  %axis = arith.constant 0 : i32
  %coord = call @zshard_rt_step_grid_coord(%axis) : (i32) -> i64
  %n = arith.index_cast %coord : i64 to index
  // expected-error @+1 {{memory plan: cannot bound the size of this allocation}}
  %t = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

func.func private @zshard_rt_step_set_alloc_category(i32)
func.func @category(%c: i32) {
  // expected-error @+1 {{memory plan: the allocation category is not a constant category}}
  call @zshard_rt_step_set_alloc_category(%c) : (i32) -> ()
  return
}

// -----

func.func @foreign(%m: memref<4xf32>) {
  // expected-error @+1 {{memory plan: deallocates a buffer that is not an allocation of the step}}
  memref.dealloc %m : memref<4xf32>
  return
}

// -----

func.func @overflow() {
  // expected-error @+1 {{memory plan: allocation size overflows}}
  %t = memref.alloc() : memref<4611686018427387904x8xf32>
  return
}

// -----

// expected-error @+1 {{zshard-memory-plan: no function with a body}}
module {
  func.func private @declared_only()
}
