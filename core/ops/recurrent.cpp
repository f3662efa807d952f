// Recurrent layers RNN, GRU and LSTM (ONNX forms up to opset 22): X [seq, batch, input] (layout 1: [batch, seq,
// input]), W [dirs, gates * hidden, input], R [dirs, gates * hidden, hidden], B [dirs, 2 * gates * hidden] (W's bias
// then R's), sequence_lens, initial_h (and LSTM's initial_c and peepholes P). Gate order: GRU z r h, LSTM i o f c.
// Outputs Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h and LSTM's Y_c [dirs, batch,
// hidden] (layout 1: batch first). Steps past a batch's sequence length leave Y zero and the state unchanged.
#include <cmath>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

enum class Cell { Rnn, Gru, Lstm };
Cell cellOf(const Node& n) { return n.op() == "RNN" ? Cell::Rnn : n.op() == "GRU" ? Cell::Gru : Cell::Lstm; }
int64_t gatesOf(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }

struct RecurrentShape {
  int64_t seq, batch, input, hidden, dirs;
  bool batchFirst;
};

RecurrentShape recurrentShape(const Node& node, const Shape& x, const Shape& w) {
  RecurrentShape s{};
  s.batchFirst = node.attrInt("layout", 0) == 1;
  if (x.size() != 3) failNode(node, "input 0 (X) must be 3-D, not " + shapeToString(x));
  s.seq = s.batchFirst ? x[1] : x[0];
  s.batch = s.batchFirst ? x[0] : x[1];
  s.input = x[2];
  s.hidden = node.attrInt("hidden_size", 0);
  std::string d = node.attrString("direction", "forward");
  if (d != "forward" && d != "reverse" && d != "bidirectional")
    failNode(node, "direction '" + d + "' is not forward, reverse or bidirectional");
  s.dirs = d == "bidirectional" ? 2 : 1;
  int64_t gates = gatesOf(cellOf(node));
  if (s.hidden <= 0 && w.size() == 3) s.hidden = w[1] / gates;
  if (w != Shape{s.dirs, gates * s.hidden, s.input})
    failNode(node, "W " + shapeToString(w) + " must be [" + std::to_string(s.dirs) + "," +
                       std::to_string(gates * s.hidden) + "," + std::to_string(s.input) + "]");
  return s;
}

void inferRecurrent(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  RecurrentShape s = recurrentShape(ctx.node(), ctx.input(0).shape, ctx.input(1).shape);
  int64_t gates = gatesOf(cellOf(ctx.node()));
  if (ctx.input(2).shape != Shape{s.dirs, gates * s.hidden, s.hidden})
    ctx.error("R " + ctx.input(2).toString() + " must be [dirs, gates * hidden, hidden]");
  if (ctx.hasInput(3) && ctx.input(3).shape != Shape{s.dirs, 2 * gates * s.hidden})
    ctx.error("B " + ctx.input(3).toString() + " must be [dirs, 2 * gates * hidden]");
  Shape state = s.batchFirst ? Shape{s.batch, s.dirs, s.hidden} : Shape{s.dirs, s.batch, s.hidden};
  if (ctx.hasInput(4) && ctx.input(4).shape != Shape{s.batch}) ctx.error("sequence_lens must be [batch]");
  for (size_t i : {5, 6})
    if (ctx.hasInput(i) && ctx.input(i).shape != state)
      ctx.error("input " + std::to_string(i) + " (initial state) " + ctx.input(i).toString() + " must be " +
                shapeToString(state));
  if (ctx.hasInput(7) && ctx.input(7).shape != Shape{s.dirs, 3 * s.hidden}) ctx.error("P must be [dirs, 3 * hidden]");
  DType t = ctx.input(0).dtype;
  ctx.outputs[0] = {t,
                    s.batchFirst ? Shape{s.batch, s.seq, s.dirs, s.hidden} : Shape{s.seq, s.dirs, s.batch, s.hidden}};
  for (size_t o = 1; o < ctx.outputs.size(); ++o) ctx.outputs[o] = {t, state};
}

using Activation = double (*)(double);
double sigmoidFn(double x) { return 1 / (1 + std::exp(-x)); }
double tanhFn(double x) { return std::tanh(x); }
double reluFn(double x) { return x > 0 ? x : 0; }

std::vector<Activation> activations(const Node& node, Cell cell, int64_t dirs) {
  std::vector<std::string> names;
  if (const Attribute* a = node.attr("activations")) names = a->strings();
  std::vector<std::string> defaults = cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
                                      : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  std::vector<Activation> out;
  for (const std::string& n : names) {
    if (n == "Sigmoid") out.push_back(sigmoidFn);
    else if (n == "Tanh") out.push_back(tanhFn);
    else if (n == "Relu") out.push_back(reluFn);
    else failNode(node, "activation '" + n + "' is not supported (Sigmoid, Tanh, Relu)");
  }
  if (out.size() != defaults.size() * size_t(dirs))
    failNode(node, "attribute 'activations' needs " + std::to_string(defaults.size() * size_t(dirs)) + " names");
  return out;
}

// The weights of one direction and the state of one batch row, stepped through the sequence.
struct Direction {
  const double *w, *r, *wb, *rb, *p;  // p: peepholes i o f, or null
  const Activation* act;              // f, g, h as the cell uses them
};

struct Stepper {
  Cell cell;
  int64_t hidden, input;
  double clip;  // <= 0: none
  bool linearBeforeReset;

  // Pre-activations: xw = x W^T + Wb and hr = h R^T + Rb, one per gate row.
  void project(const Direction& d, const double* x, const std::vector<double>& h, std::vector<double>& xw,
               std::vector<double>& hr) const {
    for (size_t g = 0; g < xw.size(); ++g) {
      double a = d.wb ? d.wb[g] : 0, b = d.rb ? d.rb[g] : 0;
      for (int64_t i = 0; i < input; ++i) a += x[i] * d.w[int64_t(g) * input + i];
      for (int64_t j = 0; j < hidden; ++j) b += h[size_t(j)] * d.r[int64_t(g) * hidden + j];
      xw[g] = a;
      hr[g] = b;
    }
  }
  double clipped(double v) const { return clip > 0 ? std::clamp(v, -clip, clip) : v; }

  void step(const Direction& d, const double* x, std::vector<double>& h, std::vector<double>& c) const {
    size_t H = size_t(hidden);
    std::vector<double> xw(H * size_t(gatesOf(cell))), hr(xw.size());
    project(d, x, h, xw, hr);
    auto gate = [&](size_t g, size_t k) { return xw[g * H + k] + hr[g * H + k]; };
    std::vector<double> next(H);
    if (cell == Cell::Rnn) {
      for (size_t k = 0; k < H; ++k) next[k] = d.act[0](clipped(gate(0, k)));
    } else if (cell == Cell::Gru) {
      std::vector<double> z(H), r(H);
      for (size_t k = 0; k < H; ++k) z[k] = d.act[0](clipped(gate(0, k))), r[k] = d.act[0](clipped(gate(1, k)));
      for (size_t k = 0; k < H; ++k) {
        double recur = r[k] * hr[2 * H + k];  // linear_before_reset: r * (h R_h^T + Rb_h)
        if (!linearBeforeReset) {             // else (r * h) R_h^T + Rb_h
          recur = d.rb ? d.rb[2 * H + k] : 0;
          for (size_t j = 0; j < H; ++j) recur += r[j] * h[j] * d.r[(2 * H + k) * H + j];
        }
        next[k] = (1 - z[k]) * d.act[1](clipped(xw[2 * H + k] + recur)) + z[k] * h[k];
      }
    } else {
      for (size_t k = 0; k < H; ++k) {
        double pi = d.p ? d.p[k] : 0, po = d.p ? d.p[H + k] : 0, pf = d.p ? d.p[2 * H + k] : 0;
        double i = d.act[0](clipped(gate(0, k) + pi * c[k])), f = d.act[0](clipped(gate(2, k) + pf * c[k]));
        double state = f * c[k] + i * d.act[1](clipped(gate(3, k)));
        double o = d.act[0](clipped(gate(1, k) + po * state));
        c[k] = state;
        next[k] = o * d.act[2](state);
      }
    }
    h = next;
  }
};

std::vector<Tensor> evalRecurrent(const Node& node, const std::vector<const Tensor*>& in,
                                  const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i && in[i] ? in[i] : nullptr; };
  Cell cell = cellOf(node);
  RecurrentShape s = recurrentShape(node, in[0]->shape(), in[1]->shape());
  if (node.attrInt("input_forget", 0)) failNode(node, "input_forget = 1 is not supported");
  int64_t G = gatesOf(cell), H = s.hidden, B = s.batch, S = s.seq;
  std::vector<double> x = in[0]->toDoubles(), w = in[1]->toDoubles(), r = in[2]->toDoubles();
  std::vector<double> bias = input(3) ? input(3)->toDoubles() : std::vector<double>{};
  std::vector<double> h0 = input(5) ? input(5)->toDoubles() : std::vector<double>(size_t(s.dirs * B * H), 0.0);
  std::vector<double> c0 = input(6) ? input(6)->toDoubles() : std::vector<double>(size_t(s.dirs * B * H), 0.0);
  std::vector<double> p = cell == Cell::Lstm && input(7) ? input(7)->toDoubles() : std::vector<double>{};
  std::vector<int64_t> lens = input(4) ? input(4)->toInts() : std::vector<int64_t>(size_t(B), S);
  std::vector<Activation> acts = activations(node, cell, s.dirs);
  Stepper st{cell, H, s.input, node.attrFloat("clip", 0.0), node.attrInt("linear_before_reset", 0) != 0};
  std::vector<double> y(size_t(S * s.dirs * B * H), 0.0), yh(size_t(s.dirs * B * H)), yc(yh.size());
  bool reverseOnly = node.attrString("direction", "forward") == "reverse";
  for (int64_t dir = 0; dir < s.dirs; ++dir) {
    Direction d{w.data() + dir * G * H * s.input, r.data() + dir * G * H * H,
                bias.empty() ? nullptr : bias.data() + dir * 2 * G * H,
                bias.empty() ? nullptr : bias.data() + dir * 2 * G * H + G * H,
                p.empty() ? nullptr : p.data() + dir * 3 * H, acts.data() + size_t(dir) * acts.size() / size_t(s.dirs)};
    bool backward = reverseOnly || dir == 1;
    for (int64_t b = 0; b < B; ++b) {
      int64_t len = std::clamp<int64_t>(lens[size_t(b)], 0, S);
      auto stateAt = [&](int64_t i) { return s.batchFirst ? (b * s.dirs + dir) * H + i : (dir * B + b) * H + i; };
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));  // initial_h/c share Y_h's layout
      for (int64_t k = 0; k < H; ++k) h[size_t(k)] = h0[size_t(stateAt(k))], c[size_t(k)] = c0[size_t(stateAt(k))];
      for (int64_t n = 0; n < len; ++n) {
        int64_t t = backward ? len - 1 - n : n;
        st.step(d, x.data() + (s.batchFirst ? b * S + t : t * B + b) * s.input, h, c);
        for (int64_t k = 0; k < H; ++k)
          y[size_t((s.batchFirst ? (b * S + t) * s.dirs + dir : (t * s.dirs + dir) * B + b) * H + k)] = h[size_t(k)];
      }
      for (int64_t k = 0; k < H; ++k) yh[size_t(stateAt(k))] = h[size_t(k)], yc[size_t(stateAt(k))] = c[size_t(k)];
    }
  }
  std::vector<Tensor> out{fromDoublesRounded(types[0].dtype, types[0].shape, y)};
  if (types.size() > 1) out.push_back(fromDoublesRounded(types[1].dtype, types[1].shape, yh));
  if (types.size() > 2) out.push_back(fromDoublesRounded(types[2].dtype, types[2].shape, yc));
  return out;
}

}  // namespace

void registerRecurrentOps(OpRegistry& r) {
  auto other = OpCategory::Other;  // no kernel template (see README)
  addOp(r, {"RNN", other, "Elman recurrence h = f(x W^T + h R^T + b) over the sequence", 3, 6, 1, 2, {}, inferRecurrent,
            evalRecurrent});
  addOp(r, {"GRU", other, "gated recurrent unit (gates z r h, linear_before_reset)", 3, 6, 1, 2, {}, inferRecurrent,
            evalRecurrent});
  addOp(r, {"LSTM", other, "long short-term memory (gates i o f c, peepholes)", 3, 8, 1, 3, {}, inferRecurrent,
            evalRecurrent});
}

}  // namespace tessera
