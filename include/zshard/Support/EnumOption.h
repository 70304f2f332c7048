//===- EnumOption.h - Enum options that list their values -------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The parser of zshard's enum options. It reads the values listed at the
// option (`llvm::cl::values`) as LLVM's does, but a value that is none of
// them is refused with the list, `'tpu' is not one of a100, h100, h200,
// cpu`, where LLVM says only `Cannot find option named 'tpu'!`. An enum
// type gets it with ZSHARD_LISTING_ENUM_PARSER(Type) at global scope, right
// after its declaration: the same for pass options (ODS and pipeline
// options) and zshard-compile's flags. EnumOptionValues gives several
// options one table of values.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_SUPPORT_ENUMOPTION_H
#define ZSHARD_SUPPORT_ENUMOPTION_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::zshard {

/// llvm::cl::parser<T> for an enum T, but listing the values on a miss.
/// `Values` keeps the name and shape of LLVM's, which MLIR's pass options
/// read to print an option's value.
template <typename T>
class ListingEnumParser : public llvm::cl::generic_parser_base {
protected:
  class OptionInfo : public GenericOptionInfo {
  public:
    OptionInfo(llvm::StringRef name, T value, llvm::StringRef help)
        : GenericOptionInfo(name, help), V(value) {}
    llvm::cl::OptionValue<T> V;
  };
  llvm::SmallVector<OptionInfo, 8> Values;

public:
  using parser_data_type = T;

  ListingEnumParser(llvm::cl::Option &option) : generic_parser_base(option) {}

  unsigned getNumOptions() const override { return Values.size(); }
  llvm::StringRef getOption(unsigned n) const override {
    return Values[n].Name;
  }
  llvm::StringRef getDescription(unsigned n) const override {
    return Values[n].HelpStr;
  }
  const llvm::cl::GenericOptionValue &
  getOptionValue(unsigned n) const override {
    return Values[n].V;
  }

  /// Returns true (after reporting) when `arg` is none of the values.
  bool parse(llvm::cl::Option &option, llvm::StringRef argName,
             llvm::StringRef arg, T &value) {
    llvm::StringRef name = Owner.hasArgStr() ? arg : argName;
    for (const OptionInfo &info : Values) {
      if (info.Name == name) {
        value = info.V.getValue();
        return false;
      }
    }
    std::string names;
    llvm::raw_string_ostream os(names);
    llvm::interleaveComma(Values, os,
                          [&](const OptionInfo &info) { os << info.Name; });
    return option.error("'" + name + "' is not one of " + names);
  }

  template <typename V>
  void addLiteralOption(llvm::StringRef name, const V &value,
                        llvm::StringRef help) {
    Values.emplace_back(name, static_cast<T>(value), help);
    AddLiteralOption(Owner, name);
  }

  void removeLiteralOption(llvm::StringRef name) {
    unsigned n = findOption(name);
    assert(n != Values.size() && "option value not found");
    Values.erase(Values.begin() + n);
  }
};

/// An enum option's values from a table, as `llvm::cl::values` gives them
/// from a list written at the option: for values that more than one option
/// takes.
struct EnumOptionValues {
  llvm::ArrayRef<llvm::cl::OptionEnumValue> values;
  template <class Opt> void apply(Opt &option) const {
    for (const llvm::cl::OptionEnumValue &value : values)
      option.getParser().addLiteralOption(value.Name, value.Value,
                                          value.Description);
  }
};

} // namespace mlir::zshard

/// Makes ListingEnumParser the parser of every option of enum type `T`.
#define ZSHARD_LISTING_ENUM_PARSER(T)                                          \
  namespace llvm::cl {                                                         \
  template <> class parser<T> : public ::mlir::zshard::ListingEnumParser<T> {  \
  public:                                                                      \
    using ::mlir::zshard::ListingEnumParser<T>::ListingEnumParser;             \
  };                                                                           \
  }

#endif // ZSHARD_SUPPORT_ENUMOPTION_H
