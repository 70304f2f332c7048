// RUN: zshard-opt %s --zshard-gpu-tile-parallel-loops --split-input-file --verify-diagnostics

// Tests that a parallel loop carrying a reduction is refused, on the loop:
// its iterations combine their values across threads, which tiling into
// blocks of independent threads does not express.
func.func @sum(%a: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{cannot map a parallel loop with reductions to a GPU}}
  %sum = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<8xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}
