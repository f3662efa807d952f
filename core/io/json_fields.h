#pragma once
// Optional fields of the JSON the core stores (run reports, override statuses): read into a typed value, with
// an error that names the field when its type is wrong.
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace tessera {

// Reads j[key] into `out` when it is there and not null (a NaN or infinity is written as null), else leaves
// `out` as it is. A value of another type throws Error "WHERE KEY: expected a number, got string": `where`
// ends with its own separator ("run report: kernels[1].").
template <typename T>
void readJsonField(const nlohmann::json& j, const char* key, const std::string& where, T& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    fail(where + key + ": expected " + (std::is_same_v<T, bool>          ? "a boolean"
                                        : std::is_arithmetic_v<T>        ? "a number"
                                        : std::is_same_v<T, std::string> ? "a string"
                                                                         : "a list of strings") +
         ", got " + it->type_name());
  }
}

}  // namespace tessera
