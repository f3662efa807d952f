#pragma once
// The levels of one compile as text with a line map (docs/window.md, Levels): graph IR (.tsr), fused graph,
// kernel IR, CUDA C++, C++ and PTX. Each level is printed by the core's own printer; the line map says which
// graph nodes every line stands for, so a selection can be found in any level and a line can be selected.
// Plain data and free functions: built on worker threads by CodeController, read by the views.
#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "codegen/codegen.h"
#include "cost/device.h"
#include "driver/stages.h"
#include "fusion/compile.h"
#include "runtime/execute/compiled_model.h"

namespace tessera::ui {

struct Selection;

// The Levels panel shows the driver's stages up to PTX (core/driver/stages.h; Run is the Run panel's).
using Level = driver::Stage;
inline constexpr int kLevelCount = int(driver::Stage::Ptx) + 1;
QString levelName(Level level);  // the stage's name: "graph", "fused", "kernel", "cuda", "cpp", "ptx"

// One level's text. lineNodes[i] = the graph nodes line i (0-based) came from; empty for lines that stand for
// none. `note` says why the text is missing or partial (a kernel that failed to lower, no CUDA toolkit, ...).
struct LevelText {
  QString text;
  std::vector<QStringList> lineNodes;
  QString note;
  // The 0-based lines that stand for any of `nodes`, in order.
  std::vector<int> linesFor(const QSet<QString>& nodes) const;
};

// One lowered kernel with its generated sources (a failed step keeps its message and leaves the rest empty).
struct KernelCode {
  execute::CompiledKernel compiled;
  codegen::GeneratedKernel cuda, cpp;
  QString error;  // code generation failed: why
  // A host group (runtime/execute/placement.h): "runs on the host (control-flow): ..."; no loops, no source.
  QString host;
  bool hasSource() const { return error.isEmpty() && host.isEmpty(); }
  int loops = 0;  // For statements in the scheduled loop nest
  // The cost model's view of the kernel on the driver's target (cost::predict): "0.012 ms, memory-bound
  // (dram): ...", its bound ("memory", "compute", "latency"), or why there is no estimate.
  QString predicted, bound;
};

// Everything below PTX for one compile: what CodeController's kernel job hands back.
struct CodeResult {
  std::shared_ptr<const CompileResult> compile;
  std::vector<KernelCode> kernels;  // in execution order, one per fused group
  LevelText kernel, cuda, cpp;
  QString error;  // the whole job failed (no fusion result, ...)
  cost::Device device;  // what the estimates assume: the driver's target (core/driver)
  double ms = 0;
  const KernelCode* find(const QString& kernelId) const;
};

// PTX of the kernels compiled so far (NVRTC, -lineinfo so that PTX lines link back to CUDA lines).
struct PtxResult {
  LevelText ptx;
  int done = 0, total = 0;
  double ms = 0;
  QStringList kernelErrors;  // "k3: NVRTC could not compile ..."
  std::vector<QString> status;  // per kernel: "" while waiting, "412 lines · 180 ms", or why there is none
  bool complete() const { return done == total; }
};

// Level builders (each a whole LevelText; called on worker threads and in tests).
LevelText graphLevel(const Graph& graph);
LevelText fusedLevel(const CompileResult& compile);
LevelText kernelLevel(const std::vector<KernelCode>& kernels);
LevelText sourceLevel(const std::vector<KernelCode>& kernels, codegen::Target target);
// `ptx[i]` is the PTX of kernels[i] ("" when not compiled yet), compiled as program ptxProgramName(kernels[i]).
QString ptxProgramName(const KernelCode& k);
LevelText ptxLevel(const std::vector<KernelCode>& kernels, const std::vector<QString>& ptx);

// The nodes of the final graph a selection stands for: a node (or what it became: a folded node's host, a
// decomposed node's parts), a value's producer, a group's nodes.
QSet<QString> selectedNodes(const CompileResult& compile, const Selection& selection);
// The selection a line's nodes make: one node; the whole group when they are all of one group's nodes;
// else the first node with all of them in Selection::nodes. None for a line of no node.
Selection selectionForLine(const CompileResult& compile, const QStringList& lineNodes);

}  // namespace tessera::ui
