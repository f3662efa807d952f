#pragma once
// Test helper: writes small ONNX models with the protobuf API.
#include <onnx/onnx_pb.h>

#include <cstring>
#include <string>
#include <vector>

namespace tessera::testing {

class ModelMaker {
 public:
  explicit ModelMaker(int64_t opset = 13, int64_t irVersion = 8) {
    model.set_ir_version(irVersion);
    auto* imp = model.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("test");
  }
  onnx::ValueInfoProto* input(const std::string& name, int32_t elemType, const std::vector<int64_t>& dims) {
    auto* vi = graph->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elemType);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    return vi;
  }
  onnx::ValueInfoProto* floatInput(const std::string& name, const std::vector<int64_t>& dims) {
    return input(name, onnx::TensorProto::FLOAT, dims);
  }
  void output(const std::string& name) { graph->add_output()->set_name(name); }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = graph->add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return n;
  }
  onnx::TensorProto* initializer(const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
    auto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }
  onnx::TensorProto* floatInitializer(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<float>& values) {
    auto* t = initializer(name, onnx::TensorProto::FLOAT, dims);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return t;
  }
  std::string bytes() const { return model.SerializeAsString(); }

  onnx::ModelProto model;
  onnx::GraphProto* graph;
};

// Declares `name` as a float tensor of `dims` (a graph output's or a value_info's type).
inline void declare(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

inline void setInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
inline void setInt(onnx::NodeProto* n, const std::string& name, int64_t value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}
inline void setFloat(onnx::NodeProto* n, const std::string& name, float value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

}  // namespace tessera::testing
