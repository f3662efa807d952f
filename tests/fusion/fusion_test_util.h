#pragma once
// Helpers the fusion tests share: the kernels of a fusion result as one line, and a run of tessera-cli.
#include <QProcess>
#include <QString>
#include <QStringList>

#include <string>

#include "fusion/fusion.h"

namespace tessera::testing {

// "k0 pointwise[a b] k1 gemm+epilogue[c]": the kernels in order with their node ids.
inline std::string kernels(const FusionResult& r) {
  std::string out;
  for (const FusedGroup& g : r.groups) {
    out += (out.empty() ? "" : " ") + g.id + " " + std::string(groupKindName(g.kind)) + "[";
    for (size_t i = 0; i < g.nodes.size(); ++i) out += (i ? " " : "") + g.nodes[i].id;
    out += "]";
  }
  return out;
}

#ifdef TESSERA_CLI
struct CliRun {
  int code = -1;
  QString out, err;
};

// Runs the tessera-cli this build made (TESSERA_CLI) with `args`, waiting up to two minutes.
inline CliRun cli(const QStringList& args) {
  QProcess p;
  p.start(TESSERA_CLI, args);
  p.waitForFinished(120000);
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}
#endif

}  // namespace tessera::testing
