#include "ui/compare/compare_view.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <iterator>

#include "ir/error.h"
#include "ui/compare/delta_chart.h"
#include "ui/graph/graph_view.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// "a1=b1, a2=b2" as a mapping; a malformed entry throws naming it.
std::map<std::string, std::string> parseMapping(const QString& text) {
  std::map<std::string, std::string> out;
  for (const QString& entry : text.split(',', Qt::SkipEmptyParts)) {
    const QStringList sides = entry.trimmed().split('=');
    if (sides.size() != 2 || sides[0].trimmed().isEmpty() || sides[1].trimmed().isEmpty())
      throw Error("node mapping: '" + entry.trimmed().toStdString() + "' is not A_NODE=B_NODE");
    out[sides[0].trimmed().toStdString()] = sides[1].trimmed().toStdString();
  }
  return out;
}

// A mapping's nodes must be in their side's model (matchNodes ignores an absent id: a typo would go unnoticed).
void checkMapping(const std::map<std::string, std::string>& mapping, const compare::Side& a, const compare::Side& b) {
  for (const auto& [na, nb] : mapping) {
    if (!a.model->findNode(na)) throw Error("node mapping: no node '" + na + "' in A (" + a.label + ")");
    if (!b.model->findNode(nb)) throw Error("node mapping: no node '" + nb + "' in B (" + b.label + ")");
  }
}

// The levels the view diffs; PTX only once it is picked.
constexpr driver::Stage kDiffLevels[] = {driver::Stage::Graph, driver::Stage::Fused, driver::Stage::Kernel,
                                         driver::Stage::Cuda,  driver::Stage::Cpp,   driver::Stage::Ptx};

QString ms(double v) { return v < 0 ? QStringLiteral("–") : QString::number(v, 'f', 4); }

std::vector<std::string> changedIds(const compare::NodeMatching& m, bool sideB) {
  std::vector<std::string> out;
  for (const compare::NodeMatch& n : m.matched)
    if (n.changed) out.push_back(sideB ? n.b : n.a);
  return out;
}

}  // namespace

CompareView::CompareView(SessionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), pickA_(new QComboBox(this)), pickB_(new QComboBox(this)),
      levelPick_(new QComboBox(this)), stepA_(new QComboBox(this)), stepB_(new QComboBox(this)), mapping_(new QLineEdit(this)), summary_(new QLabel(this)), left_(new GraphView(this)), right_(new GraphView(this)),
      table_(new QTableWidget(this)), chart_(new DeltaChart(this)), diff_(new QPlainTextEdit(this)), job_(this) {
  setObjectName("compareView");
  pickA_->setObjectName("compareA");
  pickB_->setObjectName("compareB");
  left_->setObjectName("compareLeft");
  right_->setObjectName("compareRight");
  table_->setObjectName("compareTable");
  summary_->setObjectName("compareSummary");
  summary_->setWordWrap(true);
  stepA_->setObjectName("compareStepA");
  stepB_->setObjectName("compareStepB");
  for (QComboBox* step : {stepA_, stepB_}) step->setToolTip(tr("The pass step this side is compared at (last: the whole pipeline)"));
  mapping_->setObjectName("compareMapping");
  mapping_->setPlaceholderText(tr("map nodes: A_NODE=B_NODE, …"));
  mapping_->setToolTip(tr("Nodes of A matched with nodes of B before ids, names and provenance are tried"));
  auto* go = new QPushButton(tr("Compare"), this);
  auto* file = new QPushButton(tr("B from a file…"), this);
  file->setObjectName("compareFile");
  file->setToolTip(tr("Compare branch A with another model or session (.onnx, .tsr, .tessera)"));
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("A"), this));
  bar->addWidget(pickA_);
  bar->addWidget(stepA_);
  bar->addWidget(new QLabel(tr("B"), this));
  bar->addWidget(pickB_);
  bar->addWidget(stepB_);
  bar->addWidget(go);
  bar->addWidget(file);
  bar->addWidget(mapping_);
  bar->addWidget(summary_, 1);
  auto* graphs = new QSplitter(Qt::Horizontal, this);
  graphs->addWidget(left_);
  graphs->addWidget(right_);
  auto* vertical = new QSplitter(Qt::Vertical, this);
  vertical->addWidget(graphs);
  vertical->addWidget(makeLowerTabs());
  vertical->setStretchFactor(0, 3);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(vertical, 1);
  connect(go, &QPushButton::clicked, this, [this] { compareBranches(pickA_->currentText(), pickB_->currentText()); });
  connect(file, &QPushButton::clicked, this, &CompareView::chooseFile);
  connect(levelPick_, &QComboBox::currentIndexChanged, this, &CompareView::pickLevel);
  connect(controller_, &SessionController::branchesChanged, this, &CompareView::refreshBranches);
  connect(controller_, &SessionController::compiled, this, &CompareView::refreshSteps);
  connect(left_, &GraphView::nodeClicked, this, [this](const QString& id) { selectNode(id, false); });
  connect(right_, &GraphView::nodeClicked, this, [this](const QString& id) { selectNode(id, true); });
  for (auto pair : {std::pair{left_, right_}, std::pair{right_, left_}}) {
    GraphView* from = pair.first;  // not a structured binding: clang before 16 cannot capture one
    GraphView* to = pair.second;
    connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, this, [this, from, to] { syncPan(from, to); });
    connect(from->verticalScrollBar(), &QScrollBar::valueChanged, this, [this, from, to] { syncPan(from, to); });
    connect(from, &GraphView::layoutShown, this, [this, from, to] { syncLayers(from, to); });
  }
  refreshBranches();
  refreshSteps();
}

// "last", then each pass of the current compile once, in pipeline order.
void CompareView::refreshSteps() {
  QStringList passes{QStringLiteral("last")};
  if (auto compile = controller_->compile())
    for (const Step& s : compile->steps)
      if (!passes.contains(qs(s.pass))) passes << qs(s.pass);
  for (QComboBox* pick : {stepA_, stepB_}) {
    const QString was = pick->currentText();
    pick->clear();
    pick->addItems(passes);
    if (passes.contains(was)) pick->setCurrentText(was);
  }
}

// Below the graphs: the joined runs with their chart, and the text diffs with the level picker.
QWidget* CompareView::makeLowerTabs() {
  table_->setColumnCount(7);
  table_->setHorizontalHeaderLabels({tr("change"), tr("A kernels"), tr("B kernels"), tr("A ms"), tr("B ms"), tr("Δ ms"), tr("B max abs err")});
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  auto* runs = new QSplitter(Qt::Horizontal, this);
  runs->addWidget(table_);
  runs->addWidget(chart_);
  diff_->setObjectName("compareDiff");
  diff_->setReadOnly(true);
  diff_->setLineWrapMode(QPlainTextEdit::NoWrap);
  diff_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  levelPick_->setObjectName("compareLevel");
  levelPick_->addItem(tr("all levels"));
  for (driver::Stage s : kDiffLevels) levelPick_->addItem(qs(std::string(driver::stageInfo(s).name)));
  auto* diffTab = new QWidget(this);
  auto* diffLayout = new QVBoxLayout(diffTab);
  auto* levelBar = new QHBoxLayout;
  levelBar->addWidget(new QLabel(tr("Level"), diffTab));
  levelBar->addWidget(levelPick_);
  levelBar->addStretch(1);
  diffLayout->addLayout(levelBar);
  diffLayout->addWidget(diff_, 1);
  auto* lower = new QTabWidget(this);
  lower->addTab(runs, tr("Runs"));
  lower->addTab(diffTab, tr("IR diff"));
  return lower;
}

void CompareView::refreshBranches() {
  const QStringList names = controller_->branchNames();
  for (QComboBox* pick : {pickA_, pickB_}) {
    const QString was = pick->currentText();
    pick->clear();
    pick->addItems(names);
    if (names.contains(was)) pick->setCurrentText(was);
  }
  if (pickB_->currentText() == pickA_->currentText() && names.size() > 1) pickB_->setCurrentIndex(names.size() - 1);
}

// The session's branch named `name`, null when there is none.
static const SessionBranch* branchNamed(const std::vector<SessionBranch>& branches, const QString& name) {
  auto it = std::find_if(branches.begin(), branches.end(), [&](const SessionBranch& br) { return qs(br.name) == name; });
  return it == branches.end() ? nullptr : &*it;
}

void CompareView::compareBranches(const QString& a, const QString& b) {
  const std::vector<SessionBranch> branches = controller_->branches();
  const SessionBranch *ba = branchNamed(branches, a), *bb = branchNamed(branches, b);
  if (!controller_->input() || !ba || !bb) return fail(!controller_->input() ? tr("open a model first") : tr("no branch '%1'").arg(ba ? b : a));
  pickA_->setCurrentText(a);
  pickB_->setCurrentText(b);
  fileB_.clear();
  std::vector<std::string> notes;
  compare::Side sa = compare::sideFromBranch(*ba, controller_->input(), &notes);
  compare::Side sb = compare::sideFromBranch(*bb, controller_->input(), &notes);
  startCompare(std::move(sa), std::move(sb), std::move(notes));
}

void CompareView::compareWithFile(const QString& a, const QString& ref) {
  const std::vector<SessionBranch> branches = controller_->branches();
  const SessionBranch* ba = branchNamed(branches, a);
  if (!controller_->input() || !ba) return fail(!controller_->input() ? tr("open a model first") : tr("no branch '%1'").arg(a));
  std::vector<std::string> notes;
  compare::Side sa = compare::sideFromBranch(*ba, controller_->input(), &notes);
  compare::Side sb;
  try {
    sb = compare::sideFromRef(ref.toStdString(), &notes);  // reads and checks the file: a bad one names itself
  } catch (const std::exception& e) {
    return fail(QString::fromStdString(e.what()));
  }
  pickA_->setCurrentText(a);
  fileB_ = ref;
  startCompare(std::move(sa), std::move(sb), std::move(notes));
}

void CompareView::chooseFile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Compare with a model or session"), QString(),
                                                    tr("Models and sessions (*.onnx *.tsr *.tessera);;All files (*)"));
  if (!path.isEmpty()) compareWithFile(pickA_->currentText(), path);
}

void CompareView::fail(const QString& why) {
  error_ = why;
  summary_->setText(error_);
  emit compared();
}

void CompareView::startCompare(compare::Side sa, compare::Side sb, std::vector<std::string> notes) {
  for (auto [side, pick] : {std::pair{&sa, stepA_}, std::pair{&sb, stepB_}})
    if (pick->currentIndex() > 0) compare::stopSideAfter(*side, pick->currentText().toStdString());
  std::map<std::string, std::string> mapping;
  try {
    mapping = parseMapping(mapping_->text());
    checkMapping(mapping, sa, sb);
  } catch (const std::exception& e) {
    return fail(QString::fromStdString(e.what()));
  }
  busy_ = true;
  error_.clear();
  modelB_ = sb.model;
  summary_->setText(tr("Comparing %1 with %2…").arg(qs(sb.label), qs(sa.label)));
  job_.start(
      [sa, sb, notes, mapping, ptx = withPtx_](const JobContext& job) {
        compare::CompareOptions o;
        o.levels.assign(std::begin(kDiffLevels), std::end(kDiffLevels) - (ptx ? 0 : 1));
        o.mapping = mapping;
        o.cancel = job.cancel;
        auto c = std::make_shared<compare::Comparison>(compare::compareSides(sa, sb, o));
        c->notes.insert(c->notes.begin(), notes.begin(), notes.end());
        return std::shared_ptr<const compare::Comparison>(c);
      },
      [this](JobOutcome<std::shared_ptr<const compare::Comparison>> outcome) {
        busy_ = false;
        if (!outcome.ok()) {
          error_ = outcome.error;
          summary_->setText(error_);
          return emit compared();
        }
        accept(*outcome.value);
      });
}

void CompareView::accept(std::shared_ptr<const compare::Comparison> c) {
  result_ = std::move(c);
  error_.clear();
  QString summary = qs(result_->summary);
  for (const std::string& note : result_->notes) summary += "\n" + qs(note);
  summary_->setText(summary);
  showGraphs(*result_);
  showTable(*result_);
  showDiff();
  emit compared();
}

void CompareView::showDiff() {
  if (!result_) return;
  const QString picked = levelPick_->currentIndex() > 0 ? levelPick_->currentText() : QString();
  QString text;
  for (const compare::LevelDiff& l : result_->levels) {
    const QString name = qs(std::string(driver::stageInfo(l.level).name));
    if (picked.isEmpty() || picked == name)
      text += tr("=== %1: +%2 -%3 lines\n").arg(name).arg(l.added).arg(l.removed) + qs(compare::diffText(l.lines, 3));
  }
  diff_->setPlainText(text);
}

// PTX is diffed once it is picked: the comparison runs again with it (NVRTC compiles each side's kernels).
void CompareView::pickLevel() {
  const bool ptx = levelPick_->currentText() == "ptx";
  const bool have = result_ && std::any_of(result_->levels.begin(), result_->levels.end(),
                                           [](const compare::LevelDiff& l) { return l.level == driver::Stage::Ptx; });
  if (!ptx || have || !result_ || busy_) return showDiff();
  withPtx_ = true;
  diff_->setPlainText(tr("Compiling both sides' kernels to PTX…"));
  if (!fileB_.isEmpty()) compareWithFile(pickA_->currentText(), fileB_);
  else compareBranches(pickA_->currentText(), pickB_->currentText());
}

// Each changed group's label says how it changed and what it stands for on the other side: B's "k2 · gemm ·
// split: A's k1", A's "k1 · gemm · split: B's k1, k2".
static void noteGroupChanges(const std::vector<compare::GroupChange>& changes, StepPicture& a, StepPicture& b) {
  auto joined = [](const std::vector<std::string>& ids) { return groupIds(ids).toStdString(); };
  for (const compare::GroupChange& g : changes) {
    if (g.kind == compare::GroupChange::Same) continue;
    const std::string kind = compare::groupChangeName(g.kind);
    for (const std::string& id : g.a) a.groupNotes[id] = kind + (g.b.empty() ? "" : ": B's " + joined(g.b));
    for (const std::string& id : g.b) b.groupNotes[id] = kind + (g.a.empty() ? "" : ": A's " + joined(g.a));
  }
}

void CompareView::showGraphs(const compare::Comparison& c) {
  StepPicture a;
  a.graph = c.compileA->graph;
  a.fusion = c.compileA->fusion;
  a.names = controller_->input();
  a.rewritten = changedIds(c.nodes, false);
  StepPicture b;
  b.graph = c.compileB->graph;
  b.previous = c.compileA->graph;  // B's dropped nodes are drawn as ghosts from A
  b.fusion = c.compileB->fusion;
  b.names = modelB_ ? modelB_ : controller_->input();
  b.added = c.nodes.added;
  b.removed = c.nodes.removed;
  b.rewritten = changedIds(c.nodes, true);
  noteGroupChanges(c.groups, a, b);
  left_->showStep(std::move(a));
  right_->showStep(std::move(b));
}

void CompareView::showTable(const compare::Comparison& c) {
  table_->setRowCount(int(c.kernels.size()));
  for (size_t i = 0; i < c.kernels.size(); ++i) {
    const compare::KernelDelta& k = c.kernels[i];
    const QStringList cells{qs(compare::groupChangeName(k.groups.kind)), groupIds(k.groups.a), groupIds(k.groups.b),
                            ms(k.msA), ms(k.msB),
                            k.msA >= 0 && k.msB >= 0 ? QString::number(k.deltaMs(), 'f', 4) : QStringLiteral("–"),
                            k.maxAbsErrB < 0 ? QStringLiteral("–") : QString::number(k.maxAbsErrB, 'g', 2)};
    for (int col = 0; col < cells.size(); ++col) table_->setItem(int(i), col, new QTableWidgetItem(cells[col]));
  }
  chart_->setDeltas(c.kernels);
}

bool CompareView::selectNode(const QString& id, bool sideB) {
  if (syncing_ || !result_) return false;
  syncing_ = true;
  const auto& map = sideB ? result_->nodes.bToA : result_->nodes.aToB;
  GraphView* here = sideB ? right_ : left_;
  GraphView* there = sideB ? left_ : right_;
  const bool found = here->selectNode(id, true);
  if (auto it = map.find(id.toStdString()); it != map.end()) there->selectNode(qs(it->second), true);
  syncing_ = false;
  return found;
}

void CompareView::syncPan(GraphView* from, GraphView* to) {
  if (syncing_) return;
  syncing_ = true;
  for (auto [f, t] : {std::pair{from->horizontalScrollBar(), to->horizontalScrollBar()},
                      std::pair{from->verticalScrollBar(), to->verticalScrollBar()}}) {
    const int range = f->maximum() - f->minimum();
    const double at = range > 0 ? double(f->value() - f->minimum()) / range : 0;
    t->setValue(t->minimum() + int(at * (t->maximum() - t->minimum())));
  }
  syncing_ = false;
}

void CompareView::syncLayers(GraphView* from, GraphView* to) {
  if (syncing_ || from->openLayers() == to->openLayers() || !to->layers()) return;
  syncing_ = true;
  to->setOpenLayers(from->openLayers());
  syncing_ = false;
}

}  // namespace tessera::ui
