#pragma once
// Headless rendering of the window's panels to PNG, for docs and tests (`tessera --render VIEW ...` with
// QT_QPA_PLATFORM=offscreen). The panels are the real ones, driven as a user would.
#include <QSize>
#include <QString>

namespace tessera::ui {

struct RenderRequest {
  QString model;
  QString view = "graph";  // graph | pipeline | inspector | overrides | window
  int step = -1;           // pipeline row (0 = as imported); -1: the last step
  QString select;          // node id to select (inspector); empty: the first matmul or conv
  QString overrides;       // JSON file of overrides to apply before rendering (fusion/overrides.h)
  QString output;          // .png
  QSize size{1600, 1000};
  int timeoutMs = 120000;
};

// Returns 0 on success; otherwise prints one line naming the problem to stderr and returns 1.
int renderHeadless(const RenderRequest& request);

}  // namespace tessera::ui
