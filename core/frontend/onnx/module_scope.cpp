// The module scope PyTorch's torch.export-based exporter (`torch.onnx.export(..., dynamo=True)`) records on each
// node: it names nodes `node_Conv_12`, without the `/layer1/layer1.0/conv1/Conv` scope the TorchScript exporter
// put in the name, and keeps the module path in the node's metadata instead, `pkg.torch.onnx.name_scopes` =
// "['', 'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d']" (a Python list's repr: the root, each enclosing
// module's full path, the node's own name). NodeProto.metadata_props (field 9) is newer than the ONNX library
// this builds with, so it is read from the message's unknown fields.
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <cctype>

#include "frontend/onnx/onnx_proto.h"

namespace tessera::onnxio {
namespace {

constexpr int kNodeMetadataField = 9;  // NodeProto.metadata_props (ONNX 1.16)
constexpr const char* kNameScopes = "pkg.torch.onnx.name_scopes";

// The node's metadata value for `key`, "" when it has none.
std::string metadataValue(const onnx::NodeProto& np, const std::string& key) {
  const google::protobuf::UnknownFieldSet& unknown = np.GetReflection()->GetUnknownFields(np);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& f = unknown.field(i);
    if (f.number() != kNodeMetadataField || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(f.length_delimited()) && entry.key() == key) return entry.value();
  }
  return {};
}

// The strings of a Python list's repr ("['', 'a', \"b'c\"]"); stops at anything else.
std::vector<std::string> pythonStrings(const std::string& repr) {
  std::vector<std::string> out;
  size_t i = repr.find('[');
  if (i == std::string::npos) return out;
  while (++i < repr.size()) {
    const char c = repr[i];
    if (c == ']') break;
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) continue;
    if (c != '\'' && c != '"') return {};
    std::string s;
    for (++i; i < repr.size() && repr[i] != c; ++i) {
      if (repr[i] == '\\' && i + 1 < repr.size()) ++i;
      s += repr[i];
    }
    if (i >= repr.size()) return {};  // unterminated
    out.push_back(std::move(s));
  }
  return out;
}

bool allDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

std::string moduleScopedName(const onnx::NodeProto& np, const std::string& name) {
  if (name.find('/') != std::string::npos) return name;  // a TorchScript export's scope is in the name already
  const std::string value = metadataValue(np, kNameScopes);
  if (value.empty()) return name;
  const std::vector<std::string> scopes = pythonStrings(value);
  // Each enclosing module's segment: its path past its parent's ("conv1"), a list index joined to its list
  // ("layer1.0", as TorchScript names it).
  std::string scoped, parent, parentSegment;
  for (size_t i = 1; i + 1 < scopes.size(); ++i) {
    const std::string& path = scopes[i];
    if (path.empty()) continue;
    std::string segment = !parent.empty() && path.rfind(parent + ".", 0) == 0 ? path.substr(parent.size() + 1) : path;
    if (allDigits(segment) && !parentSegment.empty()) segment = parentSegment + "." + segment;
    if (segment.find('/') != std::string::npos) return name;  // not a module path
    scoped += "/" + segment;
    parent = path;
    parentSegment = segment;
  }
  return scoped.empty() ? name : scoped + "/" + name;
}

}  // namespace tessera::onnxio
