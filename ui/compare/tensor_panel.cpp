#include "ui/compare/tensor_panel.h"

#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "io/npy.h"
#include "ui/run/run_controller.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {

// Equal-width bins as bars, the range written under them.
class HistogramView : public QWidget {
 public:
  explicit HistogramView(QWidget* parent) : QWidget(parent) { setMinimumHeight(70); }
  void setStats(const compare::TensorStats* s) {
    stats_ = s ? std::optional(*s) : std::nullopt;
    update();
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!stats_ || stats_->histogram.empty()) return;
    const auto& h = stats_->histogram;
    const int64_t most = std::max<int64_t>(1, *std::max_element(h.begin(), h.end()));
    const int textH = fontMetrics().height(), plotH = height() - textH - 4;
    const double w = double(width()) / double(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      const int barH = int(double(plotH) * double(h[i]) / double(most));
      p.fillRect(QRectF(i * w + 1, plotH - barH, std::max(1.0, w - 2), barH), QColor(0x5b, 0x7d, 0xb1));
    }
    p.setPen(palette().text().color());
    p.drawText(QRect(0, plotH + 2, width(), textH), Qt::AlignLeft, QString::number(stats_->histLo, 'g', 4));
    p.drawText(QRect(0, plotH + 2, width(), textH), Qt::AlignRight, QString::number(stats_->histHi, 'g', 4));
  }

 private:
  std::optional<compare::TensorStats> stats_;
};

namespace {

QString indexText(const std::vector<int64_t>& index) {
  QStringList parts;
  for (int64_t i : index) parts << QString::number(i);
  return "[" + parts.join(',') + "]";
}

}  // namespace

TensorPanel::TensorPanel(SessionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), title_(new QLabel(this)), statsText_(new QLabel(this)),
      errorText_(new QLabel(this)), histogram_(new HistogramView(this)), indices_(new QLineEdit(this)),
      slice_(new QTableWidget(this)), export_(new QPushButton(tr("Export .npy…"), this)) {
  setObjectName("tensorPanel");
  slice_->setObjectName("tensorSlice");
  indices_->setObjectName("tensorIndices");
  indices_->setPlaceholderText(tr("leading indices, e.g. 0,1"));
  slice_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  for (QLabel* l : {title_, statsText_, errorText_}) {
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  }
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_);
  layout->addWidget(statsText_);
  layout->addWidget(histogram_);
  layout->addWidget(errorText_);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("slice at"), this));
  row->addWidget(indices_, 1);
  row->addWidget(export_);
  layout->addLayout(row);
  layout->addWidget(slice_, 1);
  title_->setText(tr("Select an edge after a run that kept its values (Run ▸ Keep tensor values)."));
  connect(controller_, &SessionController::selectionChanged, this, &TensorPanel::onSelection);
  connect(indices_, &QLineEdit::editingFinished, this, &TensorPanel::showSlice);
  connect(export_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export tensor"), name_ + ".npy", tr("NumPy (*.npy)"));
    if (!path.isEmpty()) errorText_->setText(exportNpy(path).isEmpty() ? tr("wrote %1").arg(path) : exportNpy(path));
  });
}

void TensorPanel::onSelection(const Selection& s) {
  if (s.kind == Selection::Value) showValue(s.id);
}

const Tensor* TensorPanel::shownTensor() const {
  auto run = controller_->runs()->lastRun();
  if (!run || !run->values) return nullptr;
  auto it = run->values->run.find(name_.toStdString());
  return it == run->values->run.end() ? nullptr : &it->second;
}

bool TensorPanel::showValue(const QString& name) {
  name_ = name;
  stats_.reset();
  error_.reset();
  auto run = controller_->runs()->lastRun();
  const Tensor* t = shownTensor();
  if (!t) {
    title_->setText(!run || !run->values ? tr("%1: the last run kept no values (Run ▸ Keep tensor values, then run)").arg(name)
                                         : tr("%1: not kept by the run (inside a fused kernel, or past the budget)").arg(name));
    statsText_->clear();
    errorText_->clear();
    histogram_->setStats(nullptr);
    slice_->clear();
    return false;
  }
  stats_ = compare::tensorStats(*t);
  const compare::TensorStats& s = *stats_;
  title_->setText(tr("<b>%1</b> · %2%3 · %4 elements").arg(name.toHtmlEscaped(), QString::fromStdString(std::string(dtypeName(s.dtype))),
                                                             QString::fromStdString(shapeToString(s.shape))).arg(s.count));
  statsText_->setText(t->holdsStrings() ? tr("strings: no statistics; the slice below shows them")
                                        : tr("min %1 · max %2 · mean %3 · std %4 · NaN %5 · Inf %6")
                                              .arg(s.min, 0, 'g', 5).arg(s.max, 0, 'g', 5).arg(s.mean, 0, 'g', 5).arg(s.std, 0, 'g', 5)
                                              .arg(s.nans).arg(s.infs));
  histogram_->setStats(&s);
  if (auto r = run->values->reference.find(name.toStdString()); r != run->values->reference.end()) {
    error_ = compare::tensorError(*t, r->second);
    errorText_->setText(!error_->comparable ? tr("against the reference: %1").arg(QString::fromStdString(error_->message))
                                            : tr("against the reference: max abs error %1 at %2 · max rel error %3 at %4")
                                                  .arg(error_->maxAbs, 0, 'g', 3).arg(indexText(error_->whereAbs))
                                                  .arg(error_->maxRel, 0, 'g', 3).arg(indexText(error_->whereRel)));
  } else {
    errorText_->setText(tr("no reference value for %1").arg(name));
  }
  showSlice();
  return true;
}

void TensorPanel::setSliceIndices(const QString& indices) {
  indices_->setText(indices);
  showSlice();
}

void TensorPanel::showSlice() {
  const Tensor* t = shownTensor();
  if (!t) return;
  std::vector<int64_t> fixed;
  for (const QString& part : indices_->text().split(',', Qt::SkipEmptyParts)) fixed.push_back(part.trimmed().toLongLong());
  const compare::Slice2D s = compare::slice2D(*t, fixed);
  slice_->clear();
  slice_->setRowCount(int(s.rows));
  slice_->setColumnCount(int(s.cols));
  QStringList rows, cols;  // indices from 0, as in the error's "where" and in NumPy
  for (int64_t r = 0; r < s.rows; ++r) rows << QString::number(r);
  for (int64_t c = 0; c < s.cols; ++c) cols << QString::number(c);
  slice_->setVerticalHeaderLabels(rows);
  slice_->setHorizontalHeaderLabels(cols);
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t c = 0; c < s.cols; ++c)
      slice_->setItem(int(r), int(c), new QTableWidgetItem(s.texts.empty() ? QString::number(s.values[size_t(r * s.cols + c)], 'g', 5)
                                                                           : QString::fromStdString(s.texts[size_t(r * s.cols + c)])));
}

QString TensorPanel::exportNpy(const QString& path) {
  const Tensor* t = shownTensor();
  if (!t) return tr("no value is shown");
  try {
    writeNpy(*t, path.toStdString());
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace tessera::ui
