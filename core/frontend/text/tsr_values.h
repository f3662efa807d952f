#pragma once
// Parsing the typed pieces of a .tsr statement: tensor types, tensor data (lists, base64, generators) and
// node attributes. Each reads tokens from the stream and fails at the offending token.
#include <string>

#include "frontend/text/tsr_lexer.h"
#include "ir/attribute.h"

namespace tessera::tsr {

// dtype '[' dims ']', e.g. f32[8,64] or i64[] (a scalar).
TensorType parseTensorType(TokenStream& ts);

// The data of a tensor of `type`: '[' values ']', base64"...", zeros, ones, fill(V) or
// random(seed=N, scale=S). `what` names the tensor in messages ("const '%w'"). Tensors bigger than
// `maxBytes` are refused before anything is allocated.
Tensor parseTensorData(TokenStream& ts, const TensorType& type, const std::string& what, int64_t maxBytes);

// '{' name '=' value (',' name '=' value)* '}' with the current token at '{'.
Attributes parseAttributes(TokenStream& ts, int64_t maxTensorBytes);

}  // namespace tessera::tsr
