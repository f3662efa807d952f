// The C library's other functions (tan, the inverse and hyperbolic ones) and Mish, Swish and Shrink as pointwise
// kernels: each runs in the kernel interpreter against the reference, its CUDA compiles with NVRTC for sm_90,
// and the cpu backend runs it as a kernel, verified. A function defined on part of the line reads its input
// mapped into that part (Tanh for (-1, 1), 1 + |x| for acosh), fused in the same kernel.
#include <QtTest>

#include "cpu_run.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

enum class Domain { Line, Open1, AtLeast1 };

Case unaryCase(const std::string& op, Domain domain, Attributes attrs = {}) {
  GraphBuilder b("u");
  Value* x = b.input("x", {DType::F32, {4, 33}});
  std::vector<std::string> nodes;
  if (domain == Domain::Open1) {
    x = b.op("Mul", {b.op("Tanh", {x}, {}, "squash"), b.constant("shrink", Tensor::scalar(DType::F32, 0.999))}, {}, "inside");
    nodes = {"squash", "inside"};
  } else if (domain == Domain::AtLeast1) {
    x = b.op("Add", {b.op("Abs", {x}, {}, "abs"), b.constant("one", Tensor::scalar(DType::F32, 1.0))}, {}, "from1");
    nodes = {"abs", "from1"};
  }
  b.output(b.op(op, {x}, std::move(attrs), "f"));
  nodes.push_back("f");
  return {b.finish(), {"g0", "pointwise", nodes}};
}

}  // namespace

class TestUnaryFunctions : public QObject {
  Q_OBJECT
 private slots:
  void functionsAsKernels() {
    struct Form {
      std::string op;
      Domain domain;
      Attributes attrs;
    };
    for (const Form& f : {Form{"Tan", Domain::Open1, {}}, Form{"Asin", Domain::Open1, {}}, Form{"Acos", Domain::Open1, {}},
                          Form{"Atan", Domain::Line, {}}, Form{"Sinh", Domain::Line, {}}, Form{"Cosh", Domain::Line, {}},
                          Form{"Asinh", Domain::Line, {}}, Form{"Acosh", Domain::AtLeast1, {}},
                          Form{"Atanh", Domain::Open1, {}}, Form{"Mish", Domain::Line, {}},
                          Form{"Swish", Domain::Line, {{"alpha", 0.7}}},
                          Form{"Shrink", Domain::Line, {{"lambd", 0.3}, {"bias", 0.1}}}}) {
      std::string why = agreesEverywhere(unaryCase(f.op, f.domain, f.attrs), "pointwise", 31);
      QVERIFY2(why.empty(), (f.op + ": " + why).c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestUnaryFunctions)
#include "test_unary_functions.moc"
