#include "ui/run/roofline_chart.h"

#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <algorithm>
#include <cmath>

namespace tessera::ui {
namespace {

// Powers of ten around [lo, hi], so the axes read in decades.
std::pair<double, double> decades(double lo, double hi) {
  return {std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi)))};
}

QLogValueAxis* logAxis(const QString& title, double lo, double hi) {
  auto* a = new QLogValueAxis();
  a->setTitleText(title);
  a->setBase(10);
  a->setLabelFormat("%g");
  a->setRange(lo, hi);
  a->setMinorTickCount(-1);
  return a;
}

}  // namespace

RooflineChart::RooflineChart(QWidget* parent) : QChartView(parent) {
  setObjectName("rooflineChart");
  setRenderHint(QPainter::Antialiasing);
  chart()->setTitle(tr("Roofline"));
  chart()->legend()->setAlignment(Qt::AlignBottom);
  setMinimumHeight(220);
}

void RooflineChart::setRun(std::shared_ptr<const RunResult> run) {
  QChart* c = chart();
  c->removeAllSeries();
  for (QAbstractAxis* axis : c->axes()) c->removeAxis(axis);
  points_ = leftOut_ = 0;
  if (!run || !run->peaks.known()) {
    c->setTitle(tr("Roofline (device peaks unknown)"));
    return;
  }
  const DevicePeaks& p = run->peaks;
  const double ridge = p.gflops / p.gbps;
  double xlo = ridge / 100, xhi = ridge * 10, ylo = p.gflops / 1000, yhi = p.gflops * 2;
  std::vector<QScatterSeries*> dots;
  for (const auto& k : run->report.kernels) {
    const double ai = arithmeticIntensity(k);
    if (k.ms <= 0 || k.gflops <= 0 || ai <= 0) {
      ++leftOut_;
      continue;
    }
    xlo = std::min(xlo, ai / 2);
    xhi = std::max(xhi, ai * 2);
    ylo = std::min(ylo, k.gflops / 2);
    auto* s = new QScatterSeries();
    s->setName(QString::fromStdString(k.group));
    s->setMarkerSize(9);
    s->setColor(k.verified ? QColor(0xd9, 0x5f, 0x0e) : QColor(0xc0, 0x1c, 0x1c));
    s->append(ai, k.gflops);
    s->setPointLabelsVisible(true);
    s->setPointLabelsFormat(QString::fromStdString(k.group));  // the kernel id as the label, no coordinates
    s->setPointLabelsClipping(false);
    dots.push_back(s);
  }
  std::tie(xlo, xhi) = decades(xlo, xhi);
  std::tie(ylo, yhi) = decades(ylo, yhi);
  auto* roof = new QLineSeries();
  roof->setName(tr("%1 GB/s · %2 GFLOP/s").arg(p.gbps, 0, 'f', 0).arg(p.gflops, 0, 'f', 0));
  roof->setPen(QPen(QColor(0x33, 0x33, 0x33), 2));
  const double start = std::max(xlo, ylo / p.gbps);  // where the bandwidth slope enters the plot
  roof->append(start, p.gbps * start);
  roof->append(ridge, p.gflops);
  roof->append(xhi, p.gflops);
  std::vector<QLineSeries*> roofs = {roof};
  if (p.cacheGbps > p.gbps) {  // the roof of kernels whose buffers fit in the last-level cache
    auto* cache = new QLineSeries();
    cache->setName(tr("cache %1 GB/s (buffers up to %2 MB)").arg(p.cacheGbps, 0, 'f', 0).arg(p.cacheBytes / 1e6, 0, 'f', 0));
    cache->setPen(QPen(QColor(0x33, 0x33, 0x33), 1, Qt::DashLine));
    const double from = std::max(xlo, ylo / p.cacheGbps);
    cache->append(from, p.cacheGbps * from);
    cache->append(p.gflops / p.cacheGbps, p.gflops);
    roofs.push_back(cache);
  }
  auto* x = logAxis(tr("arithmetic intensity (FLOP/byte)"), xlo, xhi);
  auto* y = logAxis(tr("GFLOP/s"), ylo, yhi);
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (QLineSeries* r : roofs) {
    c->addSeries(r);
    r->attachAxis(x);
    r->attachAxis(y);
  }
  for (QScatterSeries* s : dots) {
    c->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  // Legend entries for the roofs only; the points carry their own labels.
  const auto markers = c->legend()->markers();
  for (int i = int(roofs.size()); i < markers.size(); ++i) markers[i]->setVisible(false);
  points_ = int(dots.size());
  c->setTitle(tr("Roofline on %1 (%2)").arg(p.name, p.source) +
              (leftOut_ ? tr(" · %n kernel(s) without FLOPs not shown", nullptr, leftOut_) : QString()));
}

}  // namespace tessera::ui
