//===- StepBuilder.h - op helpers for generated training steps --*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The small op library `zshard-gen` writes training steps with. Every helper
/// creates upstream ops only (linalg named ops and `linalg.generic`, tensor,
/// arith, math) on statically shaped tensors. `PathScope` sets the module
/// path the top-level ops created get as `zshard.path` (the root module's
/// ops get none), and as their location (`loc("h.3.attn")`), which is debug
/// information only.
///
/// Dtypes: `act()` is the element type of parameters, activations and
/// gradients (f32 or bf16). Arithmetic inside `linalg.generic` bodies is
/// always f32: `generic` extends bf16 operands to f32 on entry and truncates
/// f32 results to the output element type on exit, so the layer code is the
/// same for both dtypes. Matrix products take `act()` operands and accumulate
/// into f32 outputs.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_GEN_STEPBUILDER_H
#define ZSHARD_GEN_STEPBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>

namespace zshard::gen {

/// Element type of parameters, activations and gradients.
enum class DType { F32, BF16 };

/// Scalar f32 arithmetic inside a `linalg.generic` body.
class BodyBuilder {
public:
  BodyBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : builder(builder), loc(loc) {}

  /// An f32 constant (rounded to f32 from `value`).
  mlir::Value cst(double value);
  /// An f32 constant from an exact f32 value.
  mlir::Value cstF32(float value);
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  /// NaN-propagating maximum (`arith.maximumf`), as NumPy's max.
  mlir::Value max(mlir::Value a, mlir::Value b);
  /// NaN-propagating minimum (`arith.minimumf`).
  mlir::Value min(mlir::Value a, mlir::Value b);
  mlir::Value exp(mlir::Value a);
  mlir::Value log(mlir::Value a);
  mlir::Value tanh(mlir::Value a);
  mlir::Value sqrt(mlir::Value a);
  mlir::Value powf(mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value b);

  /// `linalg.index dim` of the enclosing generic.
  mlir::Value loopIndex(unsigned dim);
  /// An index constant.
  mlir::Value indexCst(int64_t value);
  /// An integer (i32) value cast to index.
  mlir::Value toIndex(mlir::Value integer);
  /// `arith.cmpi pred` on two index values.
  mlir::Value cmpIndex(mlir::arith::CmpIPredicate pred, mlir::Value a,
                       mlir::Value b);
  /// `tensor.extract tensor[indices]`, extended to f32 when it is a float.
  mlir::Value extract(mlir::Value tensor, mlir::ValueRange indices);

  mlir::OpBuilder &builder;
  mlir::Location loc;
};

/// A body: gets the block arguments (floats extended to f32; integers as they
/// are; output arguments last) and returns one f32 value per output.
using BodyFn = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    BodyBuilder &, llvm::ArrayRef<mlir::Value>)>;

/// A `linalg.generic` operand with its indexing map.
struct Operand {
  mlir::Value value;
  mlir::AffineMap map;
};

/// Builds the ops of a step at the current module path.
class StepBuilder {
public:
  /// Listens to `builder` (its listener is replaced) until destroyed.
  StepBuilder(mlir::ImplicitLocOpBuilder &builder, DType dtype);
  ~StepBuilder();
  StepBuilder(const StepBuilder &) = delete;
  StepBuilder &operator=(const StepBuilder &) = delete;

  mlir::ImplicitLocOpBuilder &builder() { return b; }
  mlir::MLIRContext *context() { return b.getContext(); }
  DType dtype() const { return dt; }
  /// Element type of parameters, activations and gradients.
  mlir::Type act() const { return actType; }
  mlir::Type f32() const { return f32Type; }
  mlir::Type i32() const { return i32Type; }

  /// The name location of a module path (`""` is the root module).
  mlir::Location pathLoc(llvm::StringRef path);

  /// While alive, every top-level op of the step created gets the module
  /// path `path` and the location `loc(path)`.
  class PathScope {
  public:
    PathScope(StepBuilder &sb, llvm::StringRef path);
    ~PathScope();
    PathScope(const PathScope &) = delete;
    PathScope &operator=(const PathScope &) = delete;

  private:
    StepBuilder &sb;
    mlir::Location saved;
    std::string savedPath;
  };

  //===--------------------------------------------------------------------===//
  // Types and maps
  //===--------------------------------------------------------------------===//

  static llvm::SmallVector<int64_t> shapeOf(mlir::Value v);
  static mlir::Type elementTypeOf(mlir::Value v);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type elt);
  /// Identity map of a loop nest of `rank` dims.
  mlir::AffineMap identity(unsigned rank);
  /// `(d0, ..., d{rank-1}) -> (d{dims[0]}, d{dims[1]}, ...)`.
  mlir::AffineMap project(unsigned rank, llvm::ArrayRef<unsigned> dims);
  /// `(d0, ..., d{rank-1}) -> (exprs)`.
  mlir::AffineMap affineMap(unsigned rank,
                            llvm::ArrayRef<mlir::AffineExpr> exprs);
  mlir::AffineExpr d(unsigned i);

  //===--------------------------------------------------------------------===//
  // Inits
  //===--------------------------------------------------------------------===//

  /// `tensor.empty`.
  mlir::Value empty(llvm::ArrayRef<int64_t> shape, mlir::Type elt);
  /// `tensor.empty` + `linalg.fill`.
  mlir::Value fill(llvm::ArrayRef<int64_t> shape, mlir::Type elt, double value);
  mlir::Value zeros(llvm::ArrayRef<int64_t> shape, mlir::Type elt) {
    return fill(shape, elt, 0.0);
  }

  //===--------------------------------------------------------------------===//
  // Structured ops
  //===--------------------------------------------------------------------===//

  /// A `linalg.generic`; see `BodyFn` for what the body sees.
  llvm::SmallVector<mlir::Value>
  generic(llvm::ArrayRef<Operand> ins, llvm::ArrayRef<Operand> outs,
          llvm::ArrayRef<mlir::utils::IteratorType> iterators, BodyFn body);

  /// An all-parallel generic writing a fresh `shape` x `elt` tensor through
  /// the identity map.
  mlir::Value map(llvm::ArrayRef<int64_t> shape, mlir::Type elt,
                  llvm::ArrayRef<Operand> ins, BodyFn body);

  /// Elementwise over operands of one shape (identity maps).
  mlir::Value elementwise(mlir::Type elt, llvm::ArrayRef<mlir::Value> ins,
                          BodyFn body);

  /// Sum over the last dimension into f32 (`[..., n] -> [...]`), of
  /// `fn(args)` when given (the args are the operands' elements, all of the
  /// shape of `ins[0]` or mapped by `maps`), else of `ins[0]`.
  mlir::Value reduceLast(llvm::ArrayRef<Operand> ins,
                         llvm::ArrayRef<int64_t> inShape, bool isMax,
                         BodyFn fn = nullptr);

  /// Sum over the leading dimensions of `x` into f32 (`[m, ..., n] -> [n]`
  /// for `keep = 1` trailing dims kept).
  mlir::Value sumLeading(mlir::Value x, unsigned keep);

  /// A matrix product into f32: `a @ b`, with `a` read as `a^T` when
  /// `transposeA` and `b` as `b^T` when `transposeB` (never both). Accumulates
  /// into `acc` (f32) when given, else into zeros. 2-D uses linalg.matmul,
  /// 3-D linalg.batch_matmul (with transposed indexing maps when needed).
  mlir::Value matmul(mlir::Value a, mlir::Value b, bool transposeA = false,
                     bool transposeB = false, mlir::Value acc = nullptr);

  /// `v` converted to element type `elt` (extf / truncf); `v` when it has it.
  mlir::Value convert(mlir::Value v, mlir::Type elt);
  /// `v` converted to `act()`.
  mlir::Value toAct(mlir::Value v) { return convert(v, act()); }

  mlir::Value expand(mlir::Value v, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<mlir::ReassociationIndices> reassoc);
  mlir::Value collapse(mlir::Value v,
                       llvm::ArrayRef<mlir::ReassociationIndices> reassoc);
  /// `linalg.transpose` with `perm`: `result.shape[i] = v.shape[perm[i]]`.
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> perm);

private:
  /// The module path the stamper gives, and sets it.
  std::string getPath() const;
  void setPath(llvm::StringRef path);

  mlir::ImplicitLocOpBuilder &b;
  /// Gives the top-level ops of the step the current module path (a
  /// ModulePathStamper, zshard/Analysis/ModulePaths.h).
  std::unique_ptr<mlir::OpBuilder::Listener> stamper;
  DType dt;
  mlir::Type actType, f32Type, i32Type;
};

/// Iterator shorthands.
constexpr mlir::utils::IteratorType kPar = mlir::utils::IteratorType::parallel;
constexpr mlir::utils::IteratorType kRed = mlir::utils::IteratorType::reduction;

} // namespace zshard::gen

#endif // ZSHARD_GEN_STEPBUILDER_H
