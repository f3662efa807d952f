#include "hostile_corpus.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include "frontend/onnx_model_maker.h"

namespace tessera::hostile {
namespace {

namespace fs = std::filesystem;
using testing::ModelMaker;

std::string write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string path = (fs::path(dir) / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// x: f32[4] → Relu → y, the healthy model the others are made from.
ModelMaker reluModel() {
  ModelMaker m(17);
  m.floatInput("x", {4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m;
}

std::string noise(size_t n, uint32_t seed) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(char((seed = seed * 1664525u + 1013904223u) >> 24));
  return s;
}

std::string cycle() {
  ModelMaker m(17);
  m.floatInput("x", {4});
  m.node("Add", {"x", "b"}, {"a"}, "first");
  m.node("Relu", {"a"}, {"b"}, "second");
  m.output("b");
  return m.bytes();
}

std::string withDim(int64_t d) {
  ModelMaker m(17);
  m.floatInput("x", {2, d});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m.bytes();
}

// An initializer whose external data lies two folders up, outside the model's folder.
std::string externalEscape() {
  ModelMaker m = reluModel();
  auto* t = m.initializer("w", onnx::TensorProto::FLOAT, {4});
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("../../escape.bin");
  m.node("Add", {"y", "w"}, {"z"}, "add");
  m.graph->mutable_output(0)->set_name("z");
  return m.bytes();
}

// A Constant whose tensor attribute declares 2^40 floats (4 TiB) and carries none.
std::string giantAttribute() {
  ModelMaker m(17);
  auto* n = m.node("Constant", {}, {"c"}, "giant");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(int64_t(1) << 20);
  a->mutable_t()->add_dims(int64_t(1) << 20);
  m.output("c");
  return m.bytes();
}

// The softmax kernel of good.tsr (Relu, then Softmax decomposed), and a trace setting a gemm parameter on it.
const char* kSoftmaxKey = R"("relu,sm.max,sm.sub,sm.exp,sm.sum,sm.div")";
const char* kWarpParam =
    R"({"format": "tessera-trace", "instructions": [{"kind": "set_param", "inputs": ["warp_m"], "attrs": {}, "outputs": [], "decision": 32}]})";

// A session for `model` with `extra` fields spliced into its JSON object.
std::string session(const std::string& model, const std::string& extra) {
  return R"({"format": "tessera-session", "schema_version": 1, "model": {"path": ")" + model + R"("}, )" + extra + "}";
}

// "yN" (appended: GCC 12 warns falsely on "y" + to_string).
std::string branchOutput(int depth) {
  std::string s = "y";
  s += std::to_string(depth);
  return s;
}

// A branch that returns x (captured from the outermost graph) through `depth` nested If nodes on `cond`.
onnx::GraphProto nestedBranch(int depth) {
  onnx::GraphProto g;
  g.set_name("branch" + std::to_string(depth));
  std::string out = branchOutput(depth);
  auto* n = g.add_node();
  n->set_name("level" + std::to_string(depth));
  n->add_output(out);
  if (depth == 0) {
    n->set_op_type("Identity");
    n->add_input(std::string("x"));
  } else {
    n->set_op_type("If");
    n->add_input(std::string("cond"));
    for (const char* branch : {"then_branch", "else_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = nestedBranch(std::string(branch) == "then_branch" ? depth - 1 : 0);
    }
  }
  auto* vi = g.add_output();
  vi->set_name(out);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return g;
}

std::string nestedIfs(int depth) {
  ModelMaker m(17);
  m.floatInput("x", {4});
  m.input("cond", onnx::TensorProto::BOOL, {});
  onnx::GraphProto body = nestedBranch(depth);
  for (const auto& n : body.node()) *m.graph->add_node() = n;
  m.output(branchOutput(depth));
  return m.bytes();
}

// A chain of a million Relu nodes as .tsr text (about 40 MB, so it is made here rather than committed).
std::string millionNodes() {
  std::string s = "graph million {\n  input %v0: f32[2]\n";
  s.reserve(48u << 20);
  for (int i = 1; i <= 1000000; ++i)
    s += "  node n" + std::to_string(i) + " = Relu(%v" + std::to_string(i - 1) + ") -> %v" + std::to_string(i) + "\n";
  return s + "  output %v1000000\n}\n";
}

// Constants holding NaN, +Inf and -Inf (an attention mask's -inf is the everyday case) added to the input.
std::string nanAndInf() {
  ModelMaker m(17);
  m.floatInput("x", {4});
  float inf = std::numeric_limits<float>::infinity();
  m.floatInitializer("c", {4}, {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 1.0f});
  m.node("Add", {"x", "c"}, {"y"}, "add");
  m.node("ReduceMax", {"y"}, {"z"}, "max");
  m.output("y");
  m.output("z");
  return m.bytes();
}

}  // namespace

std::vector<HostileFile> writeValidExtremes(const std::string& dir) {
  return {
      {"nested_ifs_16.onnx", write(dir, "nested_ifs_16.onnx", nestedIfs(16)), "If", {"info"}},
      {"million_nodes.tsr", write(dir, "million_nodes.tsr", millionNodes()), "1000000", {"info"}},
      {"nan_inf.onnx", write(dir, "nan_inf.onnx", nanAndInf()), "nan", {"run", "--backend", "reference"}},
  };
}

namespace {

std::vector<HostileFile> hostileModels(const std::string& dir) {
  std::string good = reluModel().bytes();
  return {
      {"truncated.onnx",
       write(dir, "truncated.onnx", good.substr(0, good.size() / 2)),
       "not a valid ONNX model",
       {"info"}},
      {"random.onnx", write(dir, "random.onnx", noise(4096, 12345)), "not a valid ONNX model", {"info"}},
      {"random.tsr", write(dir, "random.tsr", noise(4096, 777)), ":1:1: unexpected character", {"info"}},
      {"truncated.tsr",
       write(dir, "truncated.tsr", "graph g {\n  input %x: f32[4]\n  node r = Relu(%x) -> %y"),
       "found end of file",
       {"info"}},
      {"cycle.onnx", write(dir, "cycle.onnx", cycle()), "cycle through node", {"info"}},
      {"huge_dim.onnx",
       write(dir, "huge_dim.onnx", withDim(std::numeric_limits<int64_t>::max() / 2)),
       "larger than the 16 GiB limit",
       {"info"}},
      {"negative_dim.onnx", write(dir, "negative_dim.onnx", withDim(-5)), "dim 1 is negative (-5)", {"info"}},
      {"external_escape.onnx",
       write(dir, "external_escape.onnx", externalEscape()),
       "leaves the model's folder",
       {"info"}},
      {"giant_attribute.onnx",
       write(dir, "giant_attribute.onnx", giantAttribute()),
       "node 'giant' (Constant): attribute 'value'",
       {"info"}},
      // Valid ONNX, past Tessera's depth of 16 (protobuf's own default limit made it "not a valid ONNX model").
      {"nested_ifs_100.onnx", write(dir, "nested_ifs_100.onnx", nestedIfs(100)), "nested 17 levels deep", {"info"}},
      {"unknown_op.onnx",
       write(dir, "unknown_op.onnx",
             [] {
               ModelMaker m = reluModel();
               m.graph->mutable_node(0)->set_op_type("FrobnicateV2");
               return m.bytes();
             }()),
       "FrobnicateV2",
       {"info"}},
  };
}

// Sessions that load but do not fit their model (good.tsr: Relu, then Softmax).
std::vector<HostileFile> hostileSessions(const std::string& dir) {
  std::string model = write(dir, "good.tsr",
                            "graph g {\n  input %x: f32[4,8]\n  node relu = Relu(%x) -> %r: f32[4,8]\n"
                            "  node sm = Softmax(%r) {axis=-1} -> %y: f32[4,8]\n  output %y\n}\n");
  return {
      // A number nlohmann cannot hold: its out_of_range escaped without the file's name (found by fuzz_overrides).
      {"number_overflow.tessera",
       write(dir, "number_overflow.tessera", session(model, R"("pipeline": {"fuel": 1e999})")),
       "not valid JSON: [json.exception.out_of_range.406] number overflow",
       {"session"}},
      {"overrides_missing_nodes.tessera",
       write(
           dir, "overrides_missing_nodes.tessera",
           session(model, R"("overrides": [{"kind": "force-fuse", "producer": "relu", "consumer": "no_such_node"}])")),
       "no_such_node",
       {"session", "--check"}},
      {"schedule_outside_space.tessera",
       write(dir, "schedule_outside_space.tessera",
             session(model, std::string(R"("schedule_traces": {)") + kSoftmaxKey + ": " + kWarpParam + "}")),
       "set_param 'warp_m' is not a parameter of the row-reduction template",
       {"session", "--check"}},
  };
}

}  // namespace

std::vector<HostileFile> writeHostileCorpus(const std::string& dir) {
  std::vector<HostileFile> files = hostileModels(dir);
  for (HostileFile& f : hostileSessions(dir)) files.push_back(std::move(f));
  return files;
}

}  // namespace tessera::hostile
