// Lowering of each group kind, printed and checked against expected text; errors naming node and op.
#include <QtTest>

#include "kernel/visit.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

std::string text(const Case& c) { return printKernel(lower(c)); }

// Lowering must fail with an Error whose message contains `fragment`.
bool refuses(const Case& c, const std::string& fragment) {
  try {
    lower(c);
  } catch (const Error& e) {
    if (std::string(e.what()).find(fragment) != std::string::npos) return true;
    qInfo() << "error was:" << e.what();
    return false;
  }
  qInfo() << "no error";
  return false;
}

Case unary(const std::string& op, Shape s, Attributes attrs = {}) {
  GraphBuilder b("u");
  Value* x = b.input("x", {DType::F32, s});
  b.output(b.op(op, {x}, std::move(attrs), "n"));
  return {b.finish(), {"g0", "x", {"n"}}};
}

}  // namespace

class TestKernelLowering : public QObject {
  Q_OBJECT
 private slots:
  void pointwiseChain() {
    std::string t = text(pointwise());
    QVERIFY(has(t, "kernel g0 (pointwise)  # mul, add, relu\n"));
    QVERIFY(has(t, "  in  in0: global f32[4, 8]  # value 'x'\n  in  in1: global f32[8]  # value 'bias'\n"
                   "  out out0: global f32[4, 8]  # value 'relu'\n"));
    QVERIFY(has(t, "  for i0 in 0..4 {\n    for i1 in 0..8 {\n"
                   "      v0: f32 = in0[i0, i1] * in0[i0, i1]  # mul\n"
                   "      v1: f32 = v0 + in1[i1]  # add\n"
                   "      v2: f32 = max(v1, 0.0)  # relu\n"
                   "      out0[i0, i1] = v2  # relu\n    }\n  }\n"));
  }
  void broadcastOfUnitDims() {
    GraphBuilder b("bc");
    Value* x = b.input("x", {DType::F32, {3, 5}});
    Value* col = b.input("col", {DType::F32, {3, 1}});
    Value* s = b.input("s", {DType::F32, {}});
    Value* y = b.op("Sub", {x, col}, {}, "sub");
    b.output(b.op("Div", {y, s}, {}, "div"));
    std::string t = text({b.finish(), {"g", "pointwise", {"sub", "div"}}});
    QVERIFY(has(t, "v0: f32 = in0[i0, i1] - in1[i0, 0]  # sub"));
    QVERIFY(has(t, "v1: f32 = v0 / in2[]  # div"));
  }
  void sharedIntermediateIsComputedOnce() {
    // y = e * e + e with e = exp(x): one Compute for exp, used three times; both y and e are outputs.
    GraphBuilder b("dag");
    Value* x = b.input("x", {DType::F32, {6}});
    Value* e = b.op("Exp", {x}, {}, "exp");
    Value* m = b.op("Mul", {e, e}, {}, "mul");
    b.output(b.op("Add", {m, e}, {}, "add"));
    b.output(e);
    std::string t = text({b.finish(), {"g", "pointwise", {"exp", "mul", "add"}}});
    QVERIFY(has(t, "    v0: f32 = exp(in0[i0])  # exp\n    out0[i0] = v0  # exp\n    v1: f32 = v0 * v0  # mul\n"
                   "    v2: f32 = v1 + v0  # add\n    out1[i0] = v2  # add\n"));
  }
  void activationsAndCasts() {
    QVERIFY(has(text(unary("LeakyRelu", {4}, {{"alpha", 0.5}})), "v0: f32 = select(in0[i0] < 0.0, 0.5 * in0[i0], in0[i0])"));
    QVERIFY(has(text(unary("Sigmoid", {4})), "v0: f32 = sigmoid(in0[i0])"));
    QVERIFY(has(text(unary("Gelu", {4})), "v0: f32 = 0.5 * in0[i0] * (1.0 + erf(in0[i0] * 0.7071067811865476))"));
    QVERIFY(has(text(unary("Cast", {4}, {{"to", int64_t(10)}})), "v0: f16 = f16(in0[i0])"));
    QVERIFY(has(text(unary("HardSigmoid", {4})), "max(0.0, min(1.0, 0.2 * in0[i0] + 0.5))"));
  }
  void whereAndClip() {
    GraphBuilder b("wc");
    Value* c = b.input("c", {DType::Bool, {4}});
    Value* x = b.input("x", {DType::F32, {4}});
    Value* lo = b.constant("lo", filled(DType::F32, {}, -1.0));
    Value* hi = b.constant("hi", filled(DType::F32, {}, 1.0));
    Value* w = b.op("Where", {c, x, lo}, {}, "where");
    b.output(b.op("Clip", {w, lo, hi}, {}, "clip"));
    std::string t = text({b.finish(), {"g", "pointwise", {"where", "clip"}}});
    QVERIFY(has(t, "v0: f32 = select(in0[i0], in1[i0], in2[])  # where"));
    QVERIFY(has(t, "v1: f32 = min(max(v0, in2[]), in3[])  # clip"));
  }
  void softmaxRow() {
    std::string t = text(softmax());
    QVERIFY(has(t, "kernel g0 (reduction)  # softmax\n"));
    QVERIFY(has(t, "  tmp acc0: register f32[1]\n  tmp acc1: register f32[1]\n"));
    QVERIFY(has(t, "  for i0 in 0..4 {\n    alloc acc0  # softmax\n    acc0[0] = -inf  # softmax\n"
                   "    for k0 in 0..64 reduce {\n      acc0[0] max= in0[i0, k0]  # softmax\n    }\n"));
    QVERIFY(has(t, "      acc1[0] sum= exp(in0[i0, k1] - acc0[0])  # softmax\n"));
    QVERIFY(has(t, "    v0: f32 = recip(acc1[0])  # softmax\n    for j in 0..64 {\n"
                   "      v1: f32 = exp(in0[i0, j] - acc0[0]) * v0  # softmax\n      out0[i0, j] = v1  # softmax\n"));
  }
  void logSoftmax() {
    QVERIFY(has(text(unary("LogSoftmax", {2, 8}, {{"axis", int64_t(1)}})), "v1: f32 = in0[i0, j] - acc0[0] - v0  # n"));
  }
  void layerNormRow() {
    std::string t = text(layernorm());
    QVERIFY(has(t, "  for i0 in 0..2 {\n    for i1 in 0..3 {\n"));
    QVERIFY(has(t, "      v0: f32 = acc0[0] / 16.0  # ln\n"));
    QVERIFY(has(t, "        acc1[0] sum= (in0[i0, i1, k1] - v0) * (in0[i0, i1, k1] - v0)  # ln\n"));
    QVERIFY(has(t, "      v1: f32 = rsqrt(acc1[0] / 16.0 + 1e-05)  # ln\n"));
    QVERIFY(has(t, "        v2: f32 = (in0[i0, i1, j] - v0) * v1 * in1[j] + in2[j]  # ln\n"));
  }
  void reduceWithEpilogue() {
    std::string t = text(reduceMean());
    QVERIFY(t.find("i64") == std::string::npos);  // the constant axes are not a kernel parameter
    QVERIFY(has(t, "    v0: f32 = acc0[0] / 32.0  # mean\n    for j in 0..32 {\n      v1: f32 = in0[i0, j] - v0  # sub\n"
                   "      v2: f32 = exp(v1)  # exp\n      out0[i0, j] = v2  # exp\n"));
  }
  void reducePerRowOutput() {
    GraphBuilder b("rs");
    Value* x = b.input("x", {DType::F32, {5, 7}});
    Value* s = b.op("ReduceMax", {x, b.ints("axes", {-1})}, {{"keepdims", int64_t(0)}}, "max");
    b.output(b.op("Neg", {s}, {}, "neg"));
    std::string t = text({b.finish(), {"g", "reduction", {"max", "neg"}}});
    QVERIFY(has(t, "  out out0: global f32[5]"));
    QVERIFY(has(t, "      acc0[0] max= in0[i0, k0]  # max\n    }\n    v0: f32 = acc0[0]  # max\n    v1: f32 = neg(v0)  # neg\n"));
    QVERIFY(has(t, "    out0[i0] = v1  # neg\n"));
  }
  void gemmEpilogue() {
    std::string t = text(gemm());
    QVERIFY(has(t, "kernel g0 (gemm)  # matmul, add, relu\n"));
    QVERIFY(has(t, "  for i in 0..64 {\n    for j in 0..64 {\n      alloc acc0  # matmul\n      acc0[0] = 0.0  # matmul\n"
                   "      for k in 0..32 reduce {\n        acc0[0] sum= in0[i, k] * in1[k, j]  # matmul\n      }\n"
                   "      v0: f32 = acc0[0]  # matmul\n      v1: f32 = v0 + in2[j]  # add\n"
                   "      v2: f32 = max(v1, 0.0)  # relu\n      out0[i, j] = v2  # relu\n"));
  }
  void batchedMatMulBroadcast() {
    GraphBuilder b("bmm");
    Value* a = b.input("a", {DType::F16, {2, 3, 4, 5}});
    Value* w = b.input("w", {DType::F16, {3, 5, 6}});
    b.output(b.op("MatMul", {a, w}, {}, "mm"));
    std::string t = text({b.finish(), {"g", "gemm", {"mm"}}});
    QVERIFY(has(t, "for b0 in 0..2 {\n    for b1 in 0..3 {\n      for i in 0..4 {\n        for j in 0..6 {"));
    QVERIFY(has(t, "acc0[0] sum= f32(in0[b0, b1, i, k]) * f32(in1[b1, k, j])  # mm"));
    QVERIFY(has(t, "v0: f16 = f16(acc0[0])  # mm"));
  }
  void gemmTransposedWithBias() {
    GraphBuilder b("gemm");
    Value* a = b.input("a", {DType::F32, {4, 3}});
    Value* w = b.input("w", {DType::F32, {5, 4}});
    Value* c = b.input("c", {DType::F32, {5}});
    b.output(b.op("Gemm", {a, w, c}, {{"transA", int64_t(1)}, {"transB", int64_t(1)}, {"alpha", 2.0}, {"beta", 0.5}}, "gemm"));
    std::string t = text({b.finish(), {"g", "gemm", {"gemm"}}});
    QVERIFY(has(t, "for k in 0..4 reduce {\n        acc0[0] sum= in0[k, i] * in1[j, k]  # gemm"));
    QVERIFY(has(t, "v0: f32 = 2.0 * acc0[0] + 0.5 * in2[j]  # gemm"));
  }
  void convEpilogue() {
    std::string t = text(conv());
    QVERIFY(has(t, "  for n in 0..1 {\n    for oc in 0..4 {\n      for oh in 0..8 {\n        for ow in 0..8 {\n"));
    QVERIFY(has(t, "          for ic in 0..3 reduce {\n            for kh in 0..3 reduce {\n              for kw in 0..3 reduce {\n"));
    QVERIFY(has(t, "acc0[0] sum= select(oh - 1 + kh >= 0 && oh - 1 + kh < 8 && (ow - 1 + kw >= 0 && ow - 1 + kw < 8), "
                   "in0[n, ic, oh - 1 + kh, ow - 1 + kw], 0.0) * in1[oc, ic, kh, kw]  # conv"));
    QVERIFY(has(t, "v0: f32 = acc0[0] + in2[oc]  # conv\n          v1: f32 = max(v0, 0.0)  # relu\n"));
  }
  void groupedStridedConv() {
    GraphBuilder b("gc");
    Value* x = b.input("x", {DType::F32, {1, 4, 9, 9}});
    Value* w = b.constant("w", filled(DType::F32, {6, 2, 3, 3}, 1.0));
    b.output(b.op("Conv", {x, w}, {{"group", int64_t(2)}, {"strides", std::vector<int64_t>{2, 2}}}, "conv"));
    std::string t = text({b.finish(), {"g", "conv", {"conv"}}});
    QVERIFY(has(t, "acc0[0] sum= in0[n, oc / 3 * 2 + ic, oh * 2 + kh, ow * 2 + kw] * in1[oc, ic, kh, kw]  # conv"));
  }
  void maxPool() {
    std::string t = text(maxpool());
    QVERIFY(has(t, "acc0[0] = -inf  # pool"));
    QVERIFY(has(t, "acc0[0] max= in0[n, c, oh * 2 + kh, ow * 2 + kw]  # pool"));
  }
  void averagePoolCountsValidTaps() {
    GraphBuilder b("ap");
    Value* x = b.input("x", {DType::F32, {1, 1, 4, 4}});
    b.output(b.op("AveragePool", {x}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "avg"));
    std::string t = text({b.finish(), {"g", "pool", {"avg"}}});
    QVERIFY(has(t, "acc1[0] sum= select(oh - 1 + kh >= 0 && oh - 1 + kh < 4 && (ow - 1 + kw >= 0 && ow - 1 + kw < 4), 1.0, 0.0)"));
    QVERIFY(has(t, "v0: f32 = acc0[0] / acc1[0]  # avg"));
  }
  void globalAveragePool() {
    std::string t = text(unary("GlobalAveragePool", {1, 2, 3, 5}));
    QVERIFY(has(t, "for kh in 0..3 reduce {\n"));
    QVERIFY(has(t, "v0: f32 = acc0[0] / 15.0  # n"));
  }
  void transposeMapping() {
    std::string t = text(transpose());
    QVERIFY(has(t, "  for i0 in 0..96 {\n    for i1 in 0..64 {\n      v0: f32 = in0[i1, i0]  # transpose\n"));
  }
  void reshapeMapping() {
    GraphBuilder b("rs");
    Value* x = b.input("x", {DType::F32, {2, 6}});
    b.output(b.op("Reshape", {x, b.ints("shape", {3, 4})}, {}, "reshape"));
    std::string t = text({b.finish(), {"g", "data-movement", {"reshape"}}});
    QVERIFY(has(t, "v0: f32 = in0[(i0 * 4 + i1) / 6, (i0 * 4 + i1) % 6]  # reshape"));
    GraphBuilder h("heads");
    Value* q = h.input("q", {DType::F32, {8, 6}});
    h.output(h.op("Reshape", {q, h.ints("shape", {8, 2, 3})}, {}, "heads"));
    // Only the split dimension is linearized: 8 maps to 8, 6 to 2 x 3.
    QVERIFY(has(text({h.finish(), {"g", "data-movement", {"heads"}}}), "v0: f32 = in0[i0, i1 * 3 + i2]  # heads"));
  }
  void concatSliceGather() {
    GraphBuilder b("csg");
    Value* x = b.input("x", {DType::F32, {2, 3}});
    Value* y = b.input("y", {DType::F32, {2, 2}});
    b.output(b.op("Concat", {x, y}, {{"axis", int64_t(1)}}, "concat"));
    std::string t = text({b.finish(), {"g", "data-movement", {"concat"}}});
    QVERIFY(has(t, "v0: f32 = select(i1 < 3, in0[i0, i1], in1[i0, i1 - 3])  # concat"));

    GraphBuilder s("slice");
    Value* z = s.input("z", {DType::F32, {10}});
    s.output(s.op("Slice", {z, s.ints("starts", {-8}), s.ints("ends", {10}), s.ints("axes", {0}), s.ints("steps", {3})}, {}, "slice"));
    QVERIFY(has(text({s.finish(), {"g", "data-movement", {"slice"}}}), "v0: f32 = in0[2 + i0 * 3]  # slice"));

    GraphBuilder g("gather");
    Value* d = g.input("d", {DType::F32, {5, 4}});
    Value* idx = g.input("idx", {DType::I64, {3}});
    g.output(g.op("Gather", {d, idx}, {{"axis", int64_t(0)}}, "gather"));
    QVERIFY(has(text({g.finish(), {"g", "data-movement", {"gather"}}}),
                "v0: f32 = in0[checked(in1[i0], 5), i1]  # gather"));
  }
  void batchNormIsPerChannel() {
    GraphBuilder b("bn");
    Value* x = b.input("x", {DType::F32, {1, 3, 2, 2}});
    std::vector<Value*> params;
    for (const char* n : {"scale", "bias", "mean", "var"}) params.push_back(b.constant(n, filled(DType::F32, {3}, 1.0)));
    b.output(b.op("BatchNormalization", {x, params[0], params[1], params[2], params[3]}, {{"epsilon", 0.5}}, "bn"));
    std::string t = text({b.finish(), {"g", "pointwise", {"bn"}}});
    QVERIFY(has(t, "v0: f32 = (in0[i0, i1, i2, i3] - in3[i1]) * in1[i1] * rsqrt(in4[i1] + 0.5) + in2[i1]  # bn"));
  }
  void rangeUsesTheIndex() {
    GraphBuilder b("range");
    Value* start = b.input("start", {DType::F32, {}});
    Value* limit = b.constant("limit", filled(DType::F32, {}, 5.0));
    Value* delta = b.constant("delta", filled(DType::F32, {}, 1.0));
    Value* r = b.op("Range", {b.constant("s0", filled(DType::F32, {}, 0.0)), limit, delta}, {}, "range");
    b.output(b.op("Add", {r, start}, {}, "add"));
    std::string t = text({b.finish(), {"g", "pointwise", {"range", "add"}}});
    QVERIFY(has(t, "v0: f32 = in0[] + f32(i0) * in2[]  # range"));
  }
  void splitOneNestPerOutput() {
    GraphBuilder b("split");
    Value* x = b.input("x", {DType::F32, {2, 5}});
    auto parts = b.opN("Split", {x, b.ints("sizes", {2, 3})}, 2, {{"axis", int64_t(1)}}, "split");
    b.output(parts[0]);
    b.output(parts[1]);
    std::string t = text({b.finish(), {"g", "data-movement", {"split"}}});
    QVERIFY(has(t, "  for s0_0 in 0..2 {\n    for s0_1 in 0..2 {\n      v0: f32 = in0[s0_0, s0_1]  # split\n"));
    QVERIFY(has(t, "  for s1_0 in 0..2 {\n    for s1_1 in 0..3 {\n      v1: f32 = in0[s1_0, s1_1 + 2]  # split\n"
                   "      out1[s1_0, s1_1] = v1  # split\n"));
  }
  void movementChainWithPrologue() {
    // relu, then heads merged back: Transpose [4,2,3] -> [2,4,3], Reshape -> [2,12]; one nest over [2,12]:
    // the reshape splits 12 into 4 x 3 alone: out[i0, i1] = T[i0, i1 / 3, i1 % 3] = relu(x[i1 / 3, i0, i1 % 3]).
    GraphBuilder b("merge");
    Value* x = b.input("x", {DType::F32, {4, 2, 3}});
    Value* r = b.op("Relu", {x}, {}, "relu");
    Value* t = b.op("Transpose", {r}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, "merge_t");
    b.output(b.op("Reshape", {t, b.ints("shape", {2, 12})}, {}, "merge"));
    std::string text = printKernel(lower({b.finish(), {"g", "data-movement", {"relu", "merge_t", "merge"}}}));
    QVERIFY(has(text, "  for i0 in 0..2 {\n    for i1 in 0..12 {\n"
                      "      v0: f32 = max(in0[i1 / 3, i0, i1 % 3], 0.0)  # relu\n"
                      "      v1: f32 = v0  # merge_t\n      v2: f32 = v1  # merge\n      out0[i0, i1] = v2  # merge\n"));
  }
  void everyStatementKeepsProvenance() {
    for (const Case& c : {pointwise(), softmax(), layernorm(), gemm(), conv(), maxpool(), transpose()}) {
      Kernel k = lower(c);
      walk(k.body, [&](StmtNode& s) {
        bool leaf = s.kind == StmtKind::Compute || s.kind == StmtKind::Store || s.kind == StmtKind::Reduce ||
                    s.kind == StmtKind::Allocate;
        if (leaf && s.provenance.empty()) QFAIL(qPrintable(QString("no provenance in ") + stmtKindName(s.kind).data()));
      });
    }
  }
  void printingIsStable() {
    QCOMPARE(text(layernorm()), text(layernorm()));
    Kernel k = lower(gemm());
    QCOMPARE(printKernel(k.clone()), printKernel(k));
  }
  void refusals() {
    GraphBuilder b("sh");
    Value* x = b.input("x", {DType::F32, {4, 4}});
    b.output(b.op("Shape", {x}, {}, "shape"));
    QVERIFY(refuses({b.finish(), {"g", "opaque", {"shape"}}}, "kernel 'g': node 'shape' (Shape): not supported by the kernel lowering"));

    GraphBuilder r("r0");
    Value* y = r.input("x", {DType::F32, {4, 6}});
    Value* rows = r.op("ReduceSum", {y, r.ints("axes", {1})}, {}, "rows");
    Value* cols = r.op("ReduceMax", {r.op("Sub", {y, rows}, {}, "sub"), r.ints("axes0", {0})}, {}, "cols");
    r.output(cols);
    QVERIFY(refuses({r.finish(), {"g", "reduction", {"rows", "sub", "cols"}}},
                    "node 'cols' (ReduceMax): reduces other axes than the group's first reduction"));

    GraphBuilder p("pro");
    Value* a = p.input("a", {DType::F32, {4, 4}});
    Value* ra = p.op("Relu", {a}, {}, "relu");
    p.output(p.op("MatMul", {ra, a}, {}, "mm"));
    QVERIFY(refuses({p.finish(), {"g", "gemm", {"relu", "mm"}}}, "node 'mm' (MatMul): input 0 is computed inside the group"));

    // A movement op without a lowering chained in front of one that has (CenterCropPad's Pad -> Slice) is
    // refused, not read as a reshape.
    GraphBuilder pad("pad");
    Value* px = pad.input("x", {DType::F32, {4, 4}});
    Value* padded = pad.op("Pad", {px, pad.ints("pads", {1, 1, 1, 1})}, {}, "pad");
    pad.output(pad.op("Slice", {padded, pad.ints("s", {0}), pad.ints("e", {4}), pad.ints("a", {0})}, {}, "slice"));
    QVERIFY(refuses({pad.finish(), {"g", "data-movement", {"pad", "slice"}}}, "node 'pad' (Pad): not supported in a data-movement kernel"));

    GraphBuilder k0("k0");
    Value* sq = k0.input("x", {DType::F32, {7, 7}});
    Value* sum = k0.op("ReduceSum", {sq, k0.ints("axes", {1})}, {{"keepdims", int64_t(0)}}, "sum");
    k0.output(k0.op("Sub", {sq, sum}, {}, "sub"));
    QVERIFY(refuses({k0.finish(), {"g", "reduction", {"sum", "sub"}}}, "node 'sum' (ReduceSum): value 'sum' (reduced without keepdims) is broadcast along the row"));

    QVERIFY(refuses({pointwise().graph.clone(), {"g", "pointwise", {"nope"}}}, "kernel 'g': node 'nope' is not in the graph"));
    QVERIFY(refuses({pointwise().graph.clone(), {"g", "pointwise", {}}}, "kernel 'g': the group has no nodes"));
  }
};

QTEST_APPLESS_MAIN(TestKernelLowering)
#include "test_kernel_lowering.moc"
