#pragma once
// Round-trip helper for schedule tests: apply steps through a TracedSchedule on a fresh lowering, save the
// trace as JSON, load it, replay it on another fresh lowering and require identical printed IR.
#include <QtTest>
#include <algorithm>
#include <functional>

#include "kernel/schedule/trace.h"
#include "kernel/templates/templates.h"
#include "kernel_fixtures.h"

namespace tessera::kernel::fixtures {

// Returns the printed IR after the steps; records a test failure when the replay differs.
inline std::string roundTrip(const Case& c, const std::function<void(TracedSchedule&)>& steps, Trace* traceOut = nullptr) {
  Kernel k = lower(c);
  TracedSchedule s(k);
  steps(s);
  std::string text = printKernel(k);
  Trace loaded = Trace::load(s.trace().save());
  if (!(loaded == s.trace())) QTest::qFail("trace changed through JSON", __FILE__, __LINE__);
  Kernel fresh = lower(c);
  replay(fresh, loaded);
  std::string again = printKernel(fresh);
  if (again != text) {
    qInfo().noquote() << QString::fromStdString(text) << "\n--- replayed ---\n" << QString::fromStdString(again);
    QTest::qFail("replay gives different IR", __FILE__, __LINE__);
  }
  if (traceOut) *traceOut = s.trace();
  return text;
}

// Schedules `k` by its template's defaults; whether the trace applied `primitive`.
inline bool defaultScheduleUses(Kernel& k, const std::string& primitive) {
  TracedSchedule s(k);
  applyTemplate(s, defaultParams(k));
  const auto& steps = s.trace().instructions;
  return std::any_of(steps.begin(), steps.end(), [&](const Instruction& i) { return i.kind == primitive; });
}

// How many times `what` occurs in `text`.
inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

inline bool has(const std::string& text, const std::string& fragment) {
  if (text.find(fragment) != std::string::npos) return true;
  qInfo().noquote() << "missing:" << QString::fromStdString(fragment) << "\nin:\n" << QString::fromStdString(text);
  return false;
}

// Runs `f`, expecting a ScheduleError naming `loop` whose message contains `fragment`.
inline bool failsNaming(const std::function<void()>& f, const std::string& loop, const std::string& fragment) {
  try {
    f();
  } catch (const ScheduleError& e) {
    std::string what = e.what();
    if (e.loop() == loop && what.find(fragment) != std::string::npos) return true;
    qInfo().noquote() << "error was:" << e.what() << "loop" << QString::fromStdString(e.loop());
    return false;
  }
  qInfo() << "no error";
  return false;
}

}  // namespace tessera::kernel::fixtures
