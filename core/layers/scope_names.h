#pragma once
// Module scopes read from names. A PyTorch export names its nodes after the module that made them
// (`/layer3/layer3.0/conv1/Conv`: scope layer3 > layer3.0 > conv1, op label Conv); a Caffe2 or TensorFlow
// export often names only its weights (`gpu_0/res2_0_branch2a_w_0`: res2 > res2_0 > branch2a). Both are split
// here into a path of scope segments; layer_tree.h decides which name of a node to read.
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

using ScopePath = std::vector<std::string>;

// The scope of a node id with '/' separators: every non-empty segment but the last (the op label).
// Empty when the id has no '/' scope (`n5`, `relu_3`).
ScopePath scopeOfNodeId(std::string_view id);

// The scope of a parameter (weight) name. '/' and '.' separate segments; '_' joins words of one segment,
// except that a number opens a nested segment named with what came before it (`res2_0` under `res2`,
// `layer1.0` under `layer1`), and a word after a number opens the next segment (`branch2a`). Trailing
// parameter words (w, b, weight, bias, bn, running_mean, SHAPE, ...) and numbers are not scopes.
ScopePath scopeOfParameter(std::string_view name);

// The longest common leading part of two paths.
ScopePath commonPrefix(const ScopePath& a, const ScopePath& b);

// "layer3/layer3.0": segments joined by '/'.
std::string joinScope(const ScopePath& path, size_t count);

}  // namespace tessera
