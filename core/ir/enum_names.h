#pragma once
// The names of an enum's values as one table, and the two look-ups every typed status needs: a value's name
// (what JSON and printouts show) and the value of a name (reading it back, exact: no case folding).
#include <string>
#include <utility>
#include <vector>

#include "ir/error.h"

namespace tessera {

template <typename E>
using EnumNames = std::vector<std::pair<E, std::string>>;

// Throws Error "WHAT N has no name" for a value missing from the table (a table left behind by a new value).
template <typename E>
const std::string& enumName(const EnumNames<E>& names, E value, const std::string& what) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  fail(what + " " + std::to_string(static_cast<int>(value)) + " has no name");
}

// Throws Error "unknown WHAT 'NAME' (every name, in table order)".
template <typename E>
E enumNamed(const EnumNames<E>& names, const std::string& name, const std::string& what) {
  std::string known;
  for (const auto& [v, n] : names) {
    if (n == name) return v;
    known += (known.empty() ? "" : ", ") + n;
  }
  fail("unknown " + what + " '" + name + "' (" + known + ")");
}

}  // namespace tessera
