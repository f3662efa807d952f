#pragma once
// Lexical pieces of the .tsr form shared by the printer and the parser: names, strings, numbers, tensor
// elements and base64. Keeping both directions here is what makes print → parse exact.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "ir/tensor.h"

namespace tessera::tsr {

// A name that needs no quotes: [A-Za-z_][A-Za-z0-9_.\-/]*
bool isBareName(std::string_view name);
bool isBareNameStart(char c);
bool isBareNameChar(char c);
// The name as written in .tsr: bare when possible, else a quoted string.
std::string formatName(std::string_view name);
// A value reference: '%' and the name, bare when it is made of name characters only (after '%' a bare name
// may also start with a digit, '.', '-' or '/': %12, %/conv1/Conv_output_0), else quoted.
std::string formatValueRef(std::string_view name);
// A byte as messages show it: printable ASCII as itself, any other byte as \xHH.
std::string showChar(char c);
// Text in single quotes, as messages show tokens and names: 'f8'.
std::string singleQuoted(std::string_view s);
// A double-quoted string with C-style escapes (\" \\ \n \t \r \xHH); bytes >= 0x80 stay as they are.
std::string quoteString(std::string_view s);

// Shortest text that reads back to exactly this value, always marked as a float ("1.0", "1e+20", "inf").
std::string formatDouble(double v);
std::string formatFloat(float v);

// Element i of `t` as text ("1.5", "-3", "true"), or nullopt when no literal reads back to exactly its
// bytes (a NaN with a payload or sign, a bool byte other than 0 or 1).
std::optional<std::string> formatElement(const Tensor& t, int64_t i);
// Writes the element that `text` denotes into `out` (dtypeSize(dtype) bytes). Returns an error message
// ("expected an integer", "300 is out of range for u8") or nullopt on success.
std::optional<std::string> encodeElement(DType dtype, std::string_view text, std::byte* out);

// Integers and floats as written in .tsr (no leading '+', no hex). nullopt when malformed or out of range.
std::optional<int64_t> parseInt(std::string_view text);
std::optional<double> parseDouble(std::string_view text);
// True when `text` has the shape of a .tsr number: -?(digits(.digits)?([eE][+-]?digits)?|inf|nan).
bool isNumberText(std::string_view text);
// True when a number token reads as a float (has '.', an exponent, or is inf/nan).
bool looksLikeFloat(std::string_view text);

// Standard alphabet with '=' padding.
std::string base64Encode(std::span<const std::byte> bytes);
// Decoded size of `text`, or an error message when its length or padding is malformed.
std::variant<size_t, std::string> base64DecodedSize(std::string_view text);
// Decodes into `out`, which has exactly the decoded size. Returns an error message naming the first bad
// character and its offset, or nullopt.
std::optional<std::string> base64Decode(std::string_view text, std::span<std::byte> out);

}  // namespace tessera::tsr
