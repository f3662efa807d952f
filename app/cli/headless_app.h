#pragma once
// The QApplication of a tessera-cli command that draws the window's panels (render, lesson): Qt's offscreen
// platform when there is no display, and settings of its own, so the user's window layout is not used.
#include <QApplication>
#include <cstdlib>
#include <memory>

namespace tessera::cli {

// The caller keeps it for as long as it draws.
inline std::unique_ptr<QApplication> headlessApp() {
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM"))
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
  static int argc = 1;
  static char name[] = "tessera-cli";
  static char* argv[] = {name, nullptr};
  auto app = std::make_unique<QApplication>(argc, argv);
  QApplication::setOrganizationName("Tessera");
  QApplication::setApplicationName("tessera-cli");
  return app;
}

}  // namespace tessera::cli
