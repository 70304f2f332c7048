//===- RematOptions.cpp - The checkpointing policy of zshard-remat --------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Transforms/RematOptions.h"

#include "zshard/Support/ByteSize.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir::zshard;

bool mlir::zshard::parseRematPolicy(llvm::StringRef text, RematPolicy &policy,
                                    std::string &error) {
  text = text.trim();
  if (text == "none") {
    policy = RematPolicy::none();
    return true;
  }
  if (text == "all") {
    policy = RematPolicy::all();
    return true;
  }
  if (text == "selective") {
    policy = RematPolicy::selective();
    return true;
  }
  if (llvm::StringRef k = text; k.consume_front("every=")) {
    int64_t every;
    if (k.trim().getAsInteger(10, every) || every < 1) {
      error = ("every=K needs a positive K, got '" + k + "'").str();
      return false;
    }
    policy = RematPolicy::everyK(every);
    return true;
  }
  if (llvm::StringRef bytes = text; bytes.consume_front("budget=")) {
    std::optional<int64_t> budget = parseByteSize(bytes);
    if (!budget) {
      error = ("budget=BYTES needs a byte size such as 1048576 or 64MiB, "
               "got '" +
               bytes + "'")
                  .str();
      return false;
    }
    policy = RematPolicy::budgetBytes(*budget);
    return true;
  }
  error =
      ("unknown policy '" + text + "'; expected " + kRematPolicySyntax).str();
  return false;
}

llvm::raw_ostream &mlir::zshard::operator<<(llvm::raw_ostream &os,
                                            const RematPolicy &policy) {
  switch (policy.kind) {
  case RematPolicy::Kind::None:
    return os << "none";
  case RematPolicy::Kind::All:
    return os << "all";
  case RematPolicy::Kind::Selective:
    return os << "selective";
  case RematPolicy::Kind::Every:
    return os << "every=" << policy.every;
  case RematPolicy::Kind::Budget:
    return os << "budget=" << policy.budget;
  }
  return os;
}

namespace llvm::cl {

template class basic_parser<RematPolicy>;

bool parser<RematPolicy>::parse(Option &option, StringRef, StringRef arg,
                                RematPolicy &value) {
  std::string error;
  if (parseRematPolicy(arg, value, error))
    return false;
  return option.error(error);
}

void parser<RematPolicy>::printOptionDiff(const Option &option,
                                          const RematPolicy &value,
                                          const OptVal &, size_t width) const {
  printOptionName(option, width);
  std::string text;
  llvm::raw_string_ostream(text) << value;
  outs() << "= " << text << "\n";
}

void parser<RematPolicy>::anchor() {}

} // namespace llvm::cl
