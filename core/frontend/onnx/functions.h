#pragma once
// Model-local ONNX functions, inlined before import (functions.cpp): each call becomes the function's nodes,
// named under the call, with the call's inputs, outputs and attributes bound.
#include "frontend/onnx/onnx_proto.h"

namespace tessera {

// Replaces every call of one of `model`'s functions (in the graph and in subgraphs, calls within functions
// too) by the function's nodes, then drops the functions. Throws Error naming the function for a call with too
// many inputs or outputs, calls nested more than 16 deep, or a function importing another default opset. A
// function's attribute defaults (IR 9) are not read: an attribute the call does not set is left out.
void inlineFunctions(onnx::ModelProto& model);

}  // namespace tessera
