// Hardmax, the statistics normalizations, the layout ops, DFT, STFT and the window functions, GridSample, RoiAlign,
// DeformConv and TfIdfVectorizer against values worked out by hand, with the errors naming the node.
#include <QtTest>

#include <cmath>
#include <numbers>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;

}  // namespace

class TestLayoutSignal : public QObject {
  Q_OBJECT
 private slots:
  void hardmax() {
    // The first of two equal maxima wins.
    EXPECT_TENSOR(run1("Hardmax", {F32({2, 3}, {1, 3, 3, 5, 0, 1})}), (TensorType{DType::F32, {2, 3}}),
                  (V{0, 1, 0, 1, 0, 0}), 0);
    EXPECT_TENSOR(run1("Hardmax", {F32({2, 3}, {1, 3, 3, 5, 0, 1})}, {{"axis", 0}}), (TensorType{DType::F32, {2, 3}}),
                  (V{0, 1, 1, 1, 0, 0}), 0);
  }
  void statisticsNormalizations() {
    // [1, 3]: mean 2, variance 1.
    EXPECT_TENSOR(run1("InstanceNormalization", {F32({1, 1, 2}, {1, 3}), F32({1}, {2}), F32({1}, {1})},
                       {{"epsilon", 0.0}}),
                  (TensorType{DType::F32, {1, 1, 2}}), (V{-1, 3}), 1e-6);
    Tensor x = F32({1, 2, 1}, {1, 3}), ones = F32({2}, {1, 1}), zeros = F32({2}, {0, 0});
    EXPECT_TENSOR(run1("GroupNormalization", {x, ones, zeros}, {{"num_groups", 1}, {"epsilon", 0.0}}),
                  (TensorType{DType::F32, {1, 2, 1}}), (V{-1, 1}), 1e-6);
    EXPECT_TENSOR(run1("GroupNormalization", {x, ones, zeros}, {{"num_groups", 2}}),
                  (TensorType{DType::F32, {1, 2, 1}}), (V{0, 0}), 0);  // one element a group: x - mean = 0
    EXPECT_ERROR(run1("GroupNormalization", {x, ones, zeros}, {{"num_groups", 3}}), "node 'node1' (GroupNormalization)",
                 "num_groups 3 must divide the 2 channels");
    EXPECT_TENSOR(run1("MeanVarianceNormalization", {F32({1, 1, 1, 2}, {1, 3})}),
                  (TensorType{DType::F32, {1, 1, 1, 2}}), (V{-1, 1}), 1e-6);
    EXPECT_TENSOR(run1("LpNormalization", {F32({2, 2}, {3, 4, 0, 0})}), (TensorType{DType::F32, {2, 2}}),
                  (V{0.6, 0.8, 0, 0}), 1e-6);
    EXPECT_TENSOR(run1("LpNormalization", {F32({1, 2}, {3, 4})}, {{"p", 1}}), (TensorType{DType::F32, {1, 2}}),
                  (V{3.0 / 7, 4.0 / 7}), 1e-6);
    EXPECT_ERROR(run1("LpNormalization", {F32({1, 2}, {3, 4})}, {{"p", 3}}), "node 'node1' (LpNormalization)",
                 "'p' = 3");
  }
  void depthAndSpace() {
    // 8 channels of 1 pixel into 2 channels of 2x2: DCR takes channel (i*2 + j)*2 + c, CRD c*4 + i*2 + j.
    Tensor x = iota({1, 8, 1, 1});
    Tensor dcr = run1("DepthToSpace", {x}, {{"blocksize", 2}});
    EXPECT_TENSOR(dcr, (TensorType{DType::F32, {1, 2, 2, 2}}), (V{0, 2, 4, 6, 1, 3, 5, 7}), 0);
    EXPECT_TENSOR(run1("DepthToSpace", {x}, {{"blocksize", 2}, {"mode", "CRD"}}),
                  (TensorType{DType::F32, {1, 2, 2, 2}}), (V{0, 1, 2, 3, 4, 5, 6, 7}), 0);
    // SpaceToDepth undoes DepthToSpace in DCR order.
    EXPECT_TENSOR(run1("SpaceToDepth", {dcr}, {{"blocksize", 2}}), (TensorType{DType::F32, {1, 8, 1, 1}}),
                  (V{0, 1, 2, 3, 4, 5, 6, 7}), 0);
    EXPECT_ERROR(run1("DepthToSpace", {iota({1, 3, 1, 1})}, {{"blocksize", 2}}), "node 'node1' (DepthToSpace)",
                 "not a multiple of blocksize^2");
  }
  void reverseSequenceAndCrop() {
    // [time 4, batch 2]: batch 0 reversed over 4 steps, batch 1 over its first 2.
    Tensor y = run1("ReverseSequence", {iota({4, 2}), I64({2}, {4, 2})});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {4, 2}}), (V{6, 3, 4, 1, 2, 5, 0, 7}), 0);
    EXPECT_ERROR(run1("ReverseSequence", {iota({4, 2}), I64({2}, {5, 2})}), "node 'node1' (ReverseSequence)",
                 "sequence length 5");
    Tensor x = F32({5}, {1, 2, 3, 4, 5});
    EXPECT_TENSOR(run1("CenterCropPad", {x, I64({1}, {3})}, {}, {1}), (TensorType{DType::F32, {3}}), (V{2, 3, 4}), 0);
    EXPECT_TENSOR(run1("CenterCropPad", {x, I64({1}, {8})}, {}, {1}), (TensorType{DType::F32, {8}}),
                  (V{0, 1, 2, 3, 4, 5, 0, 0}), 0);
  }
  void eyeLikeAndOneHot() {
    EXPECT_TENSOR(run1("EyeLike", {iota({2, 3})}, {{"k", 1}}), (TensorType{DType::F32, {2, 3}}), (V{0, 1, 0, 0, 0, 1}),
                  0);
    EXPECT_TENSOR(run1("EyeLike", {iota({2, 2})}, {{"dtype", 7}}), (TensorType{DType::I64, {2, 2}}), (V{1, 0, 0, 1}),
                  0);
    // Index -1 counts from the end; values are [off, on].
    Tensor idx = I64({3}, {0, 2, -1}), depth = I64({}, {3}), values = F32({2}, {0, 5});
    EXPECT_TENSOR(run1("OneHot", {idx, depth, values}, {}, {1}), (TensorType{DType::F32, {3, 3}}),
                  (V{5, 0, 0, 0, 0, 5, 0, 0, 5}), 0);
    EXPECT_TENSOR(run1("OneHot", {idx, depth, values}, {{"axis", 0}}, {1}), (TensorType{DType::F32, {3, 3}}),
                  (V{5, 0, 0, 0, 0, 0, 0, 5, 5}), 0);
    EXPECT_ERROR(run1("OneHot", {idx, depth, values}), "node 'node1' (OneHot)", "input 1 (depth) must be a constant");
  }
  void dftAndWindows() {
    // The transform of an impulse is flat; of a constant, an impulse of height n.
    EXPECT_TENSOR(run1("DFT", {F32({1, 4, 1}, {1, 0, 0, 0})}), (TensorType{DType::F32, {1, 4, 2}}),
                  (V{1, 0, 1, 0, 1, 0, 1, 0}), 1e-6);
    EXPECT_TENSOR(run1("DFT", {F32({1, 4, 1}, {1, 1, 1, 1})}, {{"onesided", 1}}), (TensorType{DType::F32, {1, 3, 2}}),
                  (V{4, 0, 0, 0, 0, 0}), 1e-6);
    EXPECT_TENSOR(run1("DFT", {F32({1, 4, 2}, {4, 0, 0, 0, 0, 0, 0, 0})}, {{"inverse", 1}}),
                  (TensorType{DType::F32, {1, 4, 2}}), (V{1, 0, 1, 0, 1, 0, 1, 0}), 1e-6);
    EXPECT_ERROR(run1("DFT", {F32({1, 4, 3}, V(12, 0))}), "node 'node1' (DFT)", "1 (real) or 2 (complex)");
    // Hann: 0.5 - 0.5 cos(2 pi k / N), N = 4 periodic or size - 1 = 4 symmetric.
    EXPECT_TENSOR(run1("HannWindow", {I64({}, {4})}, {}, {0}), (TensorType{DType::F32, {4}}), (V{0, 0.5, 1, 0.5}),
                  1e-6);
    EXPECT_TENSOR(run1("HannWindow", {I64({}, {5})}, {{"periodic", 0}}, {0}), (TensorType{DType::F32, {5}}),
                  (V{0, 0.5, 1, 0.5, 0}), 1e-6);
    double h1 = 25.0 / 46 - 21.0 / 46 * std::cos(std::numbers::pi / 2);
    EXPECT_TENSOR(run1("HammingWindow", {I64({}, {4})}, {}, {0}), (TensorType{DType::F32, {4}}),
                  (V{4.0 / 46, h1, 1, h1}), 1e-6);
  }
  void gridSample() {
    // [[1, 2], [3, 4]] sampled at the corners and the centre.
    Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
    Tensor grid = F32({1, 1, 3, 2}, {-1, -1, 1, 1, 0, 0});  // (x, y) pairs
    EXPECT_TENSOR(run1("GridSample", {x, grid}, {{"align_corners", 1}}), (TensorType{DType::F32, {1, 1, 1, 3}}),
                  (V{1, 4, 2.5}), 1e-6);
    // Without align_corners, -1 is the outer edge (-0.5 in pixels): half of each tap falls in the zero padding.
    Tensor corner = F32({1, 1, 1, 2}, {-1, -1});
    EXPECT_TENSOR(run1("GridSample", {x, corner}), (TensorType{DType::F32, {1, 1, 1, 1}}), (V{0.25}), 1e-6);
    EXPECT_TENSOR(run1("GridSample", {x, corner}, {{"padding_mode", "border"}}), (TensorType{DType::F32, {1, 1, 1, 1}}),
                  (V{1}), 1e-6);
    // x = 0.5 of the width (pixel 1.25 -> nearest 1), y = -1 + (row 0): 2.
    EXPECT_TENSOR(run1("GridSample", {x, F32({1, 1, 1, 2}, {0.5, -1})}, {{"mode", "nearest"}, {"align_corners", 1}}),
                  (TensorType{DType::F32, {1, 1, 1, 1}}), (V{2}), 0);
    EXPECT_ERROR(run1("GridSample", {x, F32({1, 1, 1, 3}, {0, 0, 0})}), "node 'node1' (GridSample)", "[N, O1..Or, r]");
  }
  void stft() {
    // Frames of 2, 2 apart: [1, 0] -> bins (1, 1); [0, 0] -> 0. With window [1, 0.5] over ones: 1.5 and 0.5.
    EXPECT_TENSOR(run1("STFT", {F32({1, 4, 1}, {1, 0, 0, 0}), I64({}, {2}), Tensor(), I64({}, {2})}, {}, {1, 3}),
                  (TensorType{DType::F32, {1, 2, 2, 2}}), (V{1, 0, 1, 0, 0, 0, 0, 0}), 1e-6);
    EXPECT_TENSOR(run1("STFT", {F32({1, 4, 1}, {1, 1, 1, 1}), I64({}, {2}), F32({2}, {1, 0.5})}, {}, {1}),
                  (TensorType{DType::F32, {1, 2, 2, 2}}), (V{1.5, 0, 0.5, 0, 1.5, 0, 0.5, 0}), 1e-6);
    EXPECT_ERROR(run1("STFT", {F32({1, 4, 1}, {1, 1, 1, 1}), I64({}, {2}), Tensor(), I64({}, {5})}, {}, {1, 3}),
                 "node 'node1' (STFT)", "at most the signal's 4");
    // One mel filter over 3 bins of a 4-point DFT at rate 4, 0-2 Hz: its bins 0, 0, 1 put the whole weight on bin 0.
    Tensor mel = run1("MelWeightMatrix", {I64({}, {1}), I64({}, {4}), I64({}, {4}), F32({}, {0}), F32({}, {2})}, {},
                      {0, 1});
    EXPECT_TENSOR(mel, (TensorType{DType::F32, {3, 1}}), (V{1, 0, 0}), 0);
  }
  void roiAlignAndDeformConv() {
    // The whole 2x2 image as one bin of 2x2 samples, each on a pixel centre: mean 2.5, max 4.
    Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4}), roi = F32({1, 4}, {0, 0, 2, 2}), batch = I64({1}, {0});
    EXPECT_TENSOR(run1("RoiAlign", {x, roi, batch}, {{"sampling_ratio", 2}}), (TensorType{DType::F32, {1, 1, 1, 1}}),
                  (V{2.5}), 1e-6);
    EXPECT_TENSOR(run1("RoiAlign", {x, roi, batch}, {{"sampling_ratio", 2}, {"mode", "max"}}),
                  (TensorType{DType::F32, {1, 1, 1, 1}}), (V{4}), 1e-6);
    EXPECT_ERROR(run1("RoiAlign", {x, roi, I64({1}, {1})}), "node 'node1' (RoiAlign)", "batch index 1 is outside");
    // Zero offsets make a plain conv (sum 10); moving tap (0, 0) down a row reads 3 instead of 1; a mask halves.
    Tensor w = F32({1, 1, 2, 2}, {1, 1, 1, 1});
    V zeros(8, 0.0), down = zeros;
    down[0] = 1;  // tap 0's h offset
    EXPECT_TENSOR(run1("DeformConv", {x, w, F32({1, 8, 1, 1}, zeros)}), (TensorType{DType::F32, {1, 1, 1, 1}}), (V{10}),
                  1e-6);
    EXPECT_TENSOR(run1("DeformConv", {x, w, F32({1, 8, 1, 1}, down)}), (TensorType{DType::F32, {1, 1, 1, 1}}), (V{12}),
                  1e-6);
    EXPECT_TENSOR(run1("DeformConv", {x, w, F32({1, 8, 1, 1}, zeros), Tensor(), F32({1, 4, 1, 1}, V(4, 0.5))}),
                  (TensorType{DType::F32, {1, 1, 1, 1}}), (V{5}), 1e-6);
  }
  void tfidf() {
    // Pool: unigrams 1, 2 (outputs 0, 1) and the bigram (1, 2) (output 2), over [1, 2, 1, 2].
    Attributes a{{"pool_int64s", std::vector<int64_t>{1, 2, 1, 2}}, {"ngram_counts", std::vector<int64_t>{0, 2}},
                 {"ngram_indexes", std::vector<int64_t>{0, 1, 2}}, {"min_gram_length", 1}, {"max_gram_length", 2},
                 {"mode", "TF"}};
    Tensor x = I64({4}, {1, 2, 1, 2});
    EXPECT_TENSOR(run1("TfIdfVectorizer", {x}, a), (TensorType{DType::F32, {3}}), (V{2, 2, 2}), 0);
    // Skipping one token adds the bigrams (1, 1) and (2, 2), not in the pool; unigrams are not counted again.
    a["max_skip_count"] = 1;
    EXPECT_TENSOR(run1("TfIdfVectorizer", {x}, a), (TensorType{DType::F32, {3}}), (V{2, 2, 2}), 0);
    a["weights"] = std::vector<double>{0.5, 0.25, 2};
    a["mode"] = "TFIDF";
    EXPECT_TENSOR(run1("TfIdfVectorizer", {x}, a), (TensorType{DType::F32, {3}}), (V{1, 0.5, 4}), 0);
    Attributes bad = a;
    bad["ngram_indexes"] = std::vector<int64_t>{0, -1, 2};
    EXPECT_ERROR(run1("TfIdfVectorizer", {x}, bad), "node 'node1' (TfIdfVectorizer)", "negative index -1");
    a["mode"] = "IDF";
    EXPECT_TENSOR(run1("TfIdfVectorizer", {I64({2, 2}, {1, 3, 3, 3})}, a), (TensorType{DType::F32, {2, 3}}),
                  (V{0.5, 0, 0, 0, 0, 0}), 0);
  }
};

QTEST_GUILESS_MAIN(TestLayoutSignal)
#include "test_layout_signal.moc"
