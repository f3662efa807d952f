#pragma once
// Internal to the data-movement family: shape_ops.cpp registers the reshaping and layout ops and calls these.
namespace tessera {
class OpRegistry;
}

namespace tessera::ops {
void registerSliceOps(OpRegistry& r);   // Slice Split Concat Pad
void registerGatherOps(OpRegistry& r);  // Gather GatherElements GatherND
}  // namespace tessera::ops
