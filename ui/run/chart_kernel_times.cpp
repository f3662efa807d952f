#include "ui/run/chart_kernel_times.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QHorizontalBarSeries>
#include <QValueAxis>
#include <map>

namespace tessera::ui {

KernelTimesChart::KernelTimesChart(QWidget* parent) : QChartView(parent) {
  setObjectName("kernelTimesChart");
  setRenderHint(QPainter::Antialiasing);
  chart()->setTitle(tr("Time per kernel (ms)"));
  chart()->legend()->setAlignment(Qt::AlignBottom);
  setMinimumHeight(180);
}

void KernelTimesChart::setRuns(std::shared_ptr<const RunResult> current, std::shared_ptr<const RunResult> previous) {
  QChart* c = chart();
  c->removeAllSeries();
  for (QAbstractAxis* axis : c->axes()) c->removeAxis(axis);
  if (!current || current->report.kernels.empty()) return;
  std::map<std::string, double> before;
  if (previous)
    for (const auto& k : previous->report.kernels) before[kernelKey(k)] = k.ms;
  auto* measured = new QBarSet(tr("measured"));
  auto* prior = new QBarSet(tr("previous"));
  auto* predicted = new QBarSet(tr("predicted"));
  measured->setColor(QColor(0xd9, 0x5f, 0x0e));
  prior->setColor(QColor(0xb0, 0xb0, 0xb0));
  predicted->setColor(QColor(0x5b, 0x84, 0xb1));
  QStringList groups;
  bool anyPrior = false, anyPredicted = false;
  double top = 0;
  // Bars are drawn bottom-up: reverse so the first kernel is on top, as in the table.
  const auto& kernels = current->report.kernels;
  for (auto it = kernels.rbegin(); it != kernels.rend(); ++it) {
    groups << QString::fromStdString(it->group);
    *measured << std::max(0.0, it->ms);
    auto p = before.find(kernelKey(*it));
    *prior << (p == before.end() ? 0.0 : std::max(0.0, p->second));
    anyPrior |= p != before.end();
    *predicted << std::max(0.0, it->predictedMs);
    anyPredicted |= it->predictedMs >= 0;
    top = std::max({top, it->ms, it->predictedMs, p == before.end() ? 0.0 : p->second});
  }
  auto* series = new QHorizontalBarSeries();
  series->append(measured);
  if (anyPrior) series->append(prior);
  else delete prior;
  if (anyPredicted) series->append(predicted);
  else delete predicted;
  c->addSeries(series);
  auto* y = new QBarCategoryAxis();
  y->append(groups);
  auto* x = new QValueAxis();
  x->setRange(0, top > 0 ? top * 1.08 : 1);
  x->setLabelFormat("%.3g");
  c->addAxis(y, Qt::AlignLeft);
  c->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  series->attachAxis(y);
}

QStringList KernelTimesChart::setNames() const {
  QStringList names;
  for (QAbstractSeries* s : chart()->series())
    if (auto* bars = qobject_cast<QHorizontalBarSeries*>(s))
      for (QBarSet* set : bars->barSets()) names << set->label();
  return names;
}

}  // namespace tessera::ui
