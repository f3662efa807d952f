#pragma once
// Internal to fusion: names the softmax and layernorm patterns once the partition put them in one kernel, so
// their edges read "softmax-pattern" / "layernorm-pattern" instead of the generic "same-rows".
#include <vector>

#include "fusion/partition.h"

namespace tessera::fusion_detail {

void labelPatterns(const Partitioner& part, std::vector<FusionDecision>& decisions);

}  // namespace tessera::fusion_detail
