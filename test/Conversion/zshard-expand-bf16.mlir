// RUN: zshard-opt %s --zshard-expand-bf16 | FileCheck %s --implicit-check-not=arith.truncf --implicit-check-not=arith.extf

// Tests that an f32 -> bf16 truncation becomes integer arithmetic: the
// round-to-nearest-even bias (0x7FFF plus the kept lowest bit), the shift,
// and the quiet NaN 0x7FC0 for a NaN input (x != x).
// CHECK-LABEL: func.func @trunc(
// CHECK-DAG:     %[[BIAS:.*]] = arith.constant 32767 : i32
// CHECK-DAG:     %[[QNAN:.*]] = arith.constant 32704 : i16
// CHECK-DAG:     %[[NAN:.*]] = arith.cmpf une, %[[X:.*]], %[[X]] : f32
// CHECK-DAG:     %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:         arith.addi %{{.*}}, %[[BIAS]] : i32
// CHECK:         %[[R:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK:         %[[S:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[R]] : i16
// CHECK:         arith.bitcast %[[S]] : i16 to bf16
func.func @trunc(%x: f32) -> bf16 {
  %h = arith.truncf %x : f32 to bf16
  return %h : bf16
}

// Tests that a bf16 -> f32 extension shifts the 16 bits into the high half.
// CHECK-LABEL: func.func @ext(
// CHECK:         arith.bitcast %{{.*}} : bf16 to i16
// CHECK:         arith.extui %{{.*}} : i16 to i32
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
func.func @ext(%h: bf16) -> f32 {
  %x = arith.extf %h : bf16 to f32
  return %x : f32
}

// Tests that other conversions are left alone.
// CHECK-LABEL: func.func @f16(
// CHECK:         %[[T:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:         arith.extf %[[T]] : f16 to f32
func.func @f16(%x: f32) -> f32 {
  %h = arith.truncf %x : f32 to f16
  %y = arith.extf %h : f16 to f32
  return %y : f32
}
