// String tensors (ir/dtype.h DType::String) and the string ops (ops/strings.cpp, Equal): values worked out by
// hand, the .tsr and ONNX forms of string data, the host placement, and the errors naming the node. The ONNX node
// suite runs the ops through files too (tests/cli, onnx_node_packed_*).
#include <QtTest>

#include "frontend/onnx/onnx_proto.h"
#include "frontend/text/tsr.h"
#include "op_harness.h"
#include "runtime/reference/compare.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Strings = std::vector<std::string>;
Tensor S(Shape shape, Strings values) { return Tensor::strings(std::move(shape), std::move(values)); }

}  // namespace

class TestStrings : public QObject {
  Q_OBJECT
 private slots:
  void valuesCompareAndHashByTheirStrings() {
    Tensor a = S({2}, {"ab", "c"});
    QVERIFY(a.identical(S({2}, {"ab", "c"})));
    QVERIFY(!a.identical(S({2}, {"a", "bc"})));
    QVERIFY(a.hash() != S({2}, {"a", "bc"}).hash());  // the lengths are hashed, not only the bytes
    QCOMPARE(a.type().toString(), std::string("str[2]"));
    QVERIFY(a.holdsStrings() && a.holdsObjects() && !a.isContainer());
    QCOMPARE(Tensor(DType::String, {3}).strings(), Strings(3));
    QCOMPARE(a.reshaped({1, 2}).strings(), a.strings());
    EXPECT_ERROR(a.getDouble(0), "holds strings, not numbers");
    EXPECT_ERROR(S({3}, {"a"}), "given 1 strings");
    QVERIFY(!compareTensors(a, S({2}, {"ab", "d"}), {}).ok);
    QVERIFY(compareTensors(a, a, {}).ok);
  }

  void tsrTextRoundTrips() {
    const std::string text =
        "graph g {\n  input %x: str[2]\n  const %w: str[2] = [\"a \\\"b\\\"\", \"\\xc3\\xa9t\\xc3\\xa9\"]\n"
        "  node c = StringConcat(%x, %w) -> %y\n  output %y\n}\n";
    Graph g = parseTsr(text, "s.tsr");
    QCOMPARE(g.findValue("w")->initializer()->strings(), (Strings{"a \"b\"", "\xc3\xa9t\xc3\xa9"}));
    QCOMPARE(g.findValue("y")->type().toString(), std::string("str[2]"));
    QCOMPARE(printTsr(parseTsr(printTsr(g), "again.tsr")), printTsr(g));
    EXPECT_ERROR(parseTsr("graph g {\n  const %w: str[2] = [\"a\"]\n  output %w\n}\n", "n.tsr"), "1 string is given");
    EXPECT_ERROR(parseTsr("graph g {\n  const %w: str[1] = [1]\n  output %w\n}\n", "n.tsr"), "a quoted string");
  }

  void onnxTensorProtoRoundTrips() {
    onnx::TensorProto p;
    onnxio::tensorToProto(S({2, 1}, {"x", ""}), "v", p);
    QCOMPARE(p.data_type(), int(onnx::TensorProto::STRING));
    QCOMPARE(p.string_data_size(), 2);
    Tensor back = onnxio::tensorFromProto(p, "v", "");
    QVERIFY(back.identical(S({2, 1}, {"x", ""})));
    p.add_string_data("extra");
    EXPECT_ERROR(onnxio::tensorFromProto(p, "v.pb", ""), "v.pb: string_data holds 3 values but str[2,1] needs 2");
    p.clear_string_data();
    p.set_raw_data("ab");
    EXPECT_ERROR(onnxio::tensorFromProto(p, "v.pb", ""), "holds its values in string_data only");
  }

  void equalAndConcatBroadcast() {
    Tensor eq = run1("Equal", {S({2, 2}, {"a", "b", "a", "c"}), S({2}, {"a", "c"})});
    QCOMPARE(eq.toInts(), (std::vector<int64_t>{1, 0, 1, 1}));
    Tensor cat = run1("StringConcat", {S({2}, {"ab", ""}), S({}, {"!"})});
    QCOMPARE(cat.strings(), (Strings{"ab!", "!"}));
    EXPECT_ERROR(run1("StringConcat", {S({2}, {"a", "b"}), S({3}, {"a", "b", "c"})}), "do not broadcast");
  }

  void splitOnADelimiterOrWhitespace() {
    OpRun r = runOp("StringSplit", {S({3}, {"a,,b", "", "c"})}, {{"delimiter", ","}}, {0}, 2);
    QCOMPARE(r.outputs[0].shape(), (Shape{3, 3}));
    QCOMPARE(r.outputs[0].strings(), (Strings{"a", "", "b", "", "", "", "c", "", ""}));
    QCOMPARE(r.outputs[1].toInts(), (std::vector<int64_t>{3, 1, 1}));  // "" split on ',' is one empty part
    OpRun ws = runOp("StringSplit", {S({2}, {"  x  y ", "   "})}, {}, {0}, 2);
    QCOMPARE(ws.outputs[0].strings(), (Strings{"x", "y", "", ""}));
    QCOMPARE(ws.outputs[1].toInts(), (std::vector<int64_t>{2, 0}));  // whitespace only: no parts
    OpRun max = runOp("StringSplit", {S({1}, {"a b  c d"})}, {{"maxsplit", int64_t(1)}}, {0}, 2);
    QCOMPARE(max.outputs[0].strings(), (Strings{"a", "b  c d"}));
    EXPECT_ERROR(runOp("StringSplit", {S({1}, {"a"})}, {{"maxsplit", int64_t(-1)}}, {0}, 2), "maxsplit = -1");
    EXPECT_ERROR(runOp("StringSplit", {S({1}, {"a"})}, {}, {}, 2), "must be a constant");
  }

  void normalizerDropsStopwordsThenChangesCase() {
    Attributes a{{"stopwords", Strings{"the"}}, {"case_change_action", "UPPER"}};
    QCOMPARE(runOp("StringNormalizer", {S({3}, {"The", "cat", "the"})}, a, {0}).outputs[0].strings(), (Strings{"CAT"}));
    a["is_case_sensitive"] = int64_t(1);
    QCOMPARE(runOp("StringNormalizer", {S({1, 3}, {"The", "cat", "the"})}, a, {0}).outputs[0].strings(),
             (Strings{"THE", "CAT"}));
    Tensor none = runOp("StringNormalizer", {S({1, 1}, {"the"})}, a, {0}).outputs[0];
    QCOMPARE(none.shape(), (Shape{1, 1}));  // every string a stopword: one empty string
    QCOMPARE(none.strings(), (Strings{""}));
    EXPECT_ERROR(runOp("StringNormalizer", {S({2, 2}, {"a", "b", "c", "d"})}, {}, {0}), "takes [C] or [1, C]");
    EXPECT_ERROR(runOp("StringNormalizer", {S({1}, {"a"})}, {{"case_change_action", "TITLE"}}, {0}), "'TITLE'");
  }

  void regexMatchesWholeStrings() {
    Tensor m = run1("RegexFullMatch", {S({3}, {"ab12", "ab12x", "ab"})}, {{"pattern", "[a-z]+\\d+"}});
    QCOMPARE(m.toInts(), (std::vector<int64_t>{1, 0, 0}));
    EXPECT_ERROR(run1("RegexFullMatch", {S({1}, {"a"})}, {{"pattern", "(unclosed"}}),
                 "attribute pattern '(unclosed' is not a regular expression");
  }

  void labelEncoderMapsEveryKind() {
    Attributes toInt{{"keys_strings", Strings{"a", "b"}}, {"values_int64s", std::vector<int64_t>{7, 8}},
                     {"default_int64", int64_t(-5)}};
    QCOMPARE(run1("ai.onnx.ml::LabelEncoder", {S({3}, {"b", "z", "a"})}, toInt).toInts(), (std::vector<int64_t>{8, -5, 7}));
    Attributes toStr{{"keys_int64s", std::vector<int64_t>{1, 2}}, {"values_strings", Strings{"one", "two"}}};
    QCOMPARE(run1("ai.onnx.ml::LabelEncoder", {I64({2}, {2, 9})}, toStr).strings(), (Strings{"two", "_Unused"}));
    Attributes tensors{{"keys_tensor", S({2}, {"x", "y"})}, {"values_tensor", T(DType::I16, {2}, {3, 4})},
                       {"default_tensor", T(DType::I16, {1}, {42})}};
    Tensor y = run1("ai.onnx.ml::LabelEncoder", {S({2}, {"y", "q"})}, tensors);
    QCOMPARE(y.dtype(), DType::I16);
    QCOMPARE(y.toInts(), (std::vector<int64_t>{4, 42}));
    Attributes uneven{{"keys_strings", Strings{"a"}}, {"values_int64s", std::vector<int64_t>{1, 2}}};
    EXPECT_ERROR(run1("ai.onnx.ml::LabelEncoder", {S({1}, {"a"})}, uneven), "1 keys but 2 values");
    EXPECT_ERROR(run1("ai.onnx.ml::LabelEncoder", {I64({1}, {1})}, toInt), "but the keys are str");
  }

  void dataMovementMovesStrings() {
    Tensor m = S({2, 3}, {"a", "b", "c", "d", "e", "f"});
    QCOMPARE(run1("Transpose", {m}).strings(), (Strings{"a", "d", "b", "e", "c", "f"}));
    QCOMPARE(run1("Slice", {m, I64({1}, {1}), I64({1}, {3}), I64({1}, {1})}, {}, {1, 2, 3}).strings(),
             (Strings{"b", "c", "e", "f"}));
    QCOMPARE(run1("Gather", {m, I64({2}, {1, 0})}, {{"axis", int64_t(0)}}).strings(),
             (Strings{"d", "e", "f", "a", "b", "c"}));
    QCOMPARE(run1("Concat", {m, S({2, 1}, {"x", "y"})}, {{"axis", int64_t(1)}}).strings(),
             (Strings{"a", "b", "c", "x", "d", "e", "f", "y"}));
    QCOMPARE(run1("Unsqueeze", {S({2}, {"p", "q"}), I64({1}, {0})}, {}, {1}).shape(), (Shape{1, 2}));
    QCOMPARE(run1("Expand", {S({1}, {"z"}), I64({1}, {3})}, {}, {1}).strings(), (Strings{"z", "z", "z"}));
    EXPECT_ERROR(run1("GatherElements", {m, I64({2, 1}, {0, 0})}), "GatherElements takes numbers, not strings");
  }

  void numericOpsRefuseStrings() {
    EXPECT_ERROR(run1("Relu", {S({1}, {"a"})}), "input 0 is a str[1]; Relu takes numbers, not strings");
    EXPECT_ERROR(run1("Add", {S({1}, {"a"}), S({1}, {"b"})}), "Add takes numbers, not strings");
    QCOMPARE(run1("Identity", {S({1}, {"a"})}).strings(), (Strings{"a"}));
  }
};

QTEST_MAIN(TestStrings)
#include "test_strings.moc"
