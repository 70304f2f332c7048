//===- main.cpp - a program using an installed zshard ---------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard-consumer STEP.mlir: parses a training step with the compiler
// library, reads its contract, and asks the runtime library for its version.
// One line on success; one line and exit 1 otherwise.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/StepContract.h"
#include "zshard/InitAll.h"
#include "zshard/abi/InitSpec.h"
#include "zshard/runtime/zshard_rt.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: zshard-consumer STEP.mlir\n");
    return 2;
  }
  mlir::DialectRegistry registry;
  mlir::zshard::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  mlir::zshard::StepContract contract(*module);
  if (mlir::failed(contract.run()))
    return 1;
  unsigned inits = 0;
  for (const mlir::zshard::StepArgument &argument : contract.getArguments())
    if (argument.init &&
        zshard_abi::InitSpec::parse(argument.init->str()).has_value())
      ++inits;
  std::printf("zshard-consumer: step '%s' with %zu arguments (%u init "
              "specs), runtime %s\n",
              contract.getStep().getName().str().c_str(),
              contract.getArguments().size(), inits,
              zshard_rt_version_string());
  return 0;
}
