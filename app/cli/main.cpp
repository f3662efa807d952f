// tessera-cli: the compiler without the window. Every GUI action that computes something has a twin here.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "app/cli/commands.h"
#include "ir/error.h"
#ifdef TESSERA_HAS_REMOTE
#include "app/remote/remote_backend.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"tessera-cli: import, check, print, convert and run tensor programs"};
  app.require_subcommand(1);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug messages");
  app.add_flag("-q,--quiet", quiet, "Log errors only");
  int exitCode = 0;
  tessera::cli::addInfoCommand(app, exitCode);
  tessera::cli::addPrintCommand(app, exitCode);
  tessera::cli::addConvertCommand(app, exitCode);
  tessera::cli::addRunCommand(app, exitCode);
  tessera::cli::addConformanceCommand(app, exitCode);
  tessera::cli::addCompileCommand(app, exitCode);
  tessera::cli::addSessionCommand(app, exitCode);
  tessera::cli::addRenderCommand(app, exitCode);
  tessera::cli::addTuneCommand(app, exitCode);
  tessera::cli::addCompareCommand(app, exitCode);
  tessera::cli::addLessonCommand(app, exitCode);
#ifdef TESSERA_HAS_REMOTE
  tessera::cli::addServeCommand(app, exitCode);
  // cuda runs in-process: the program ends after its run ($TESSERA_GPU_WORKER=1: in a worker process, as the window).
  tessera::remote::ConnectorOptions remote;
  remote.cudaInWorker = [] {
    const char* env = std::getenv("TESSERA_GPU_WORKER");
    return env && std::string(env) == "1";
  }();
  tessera::remote::installRemoteConnector(remote);
#endif
  app.parse_complete_callback([&] {
    spdlog::set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::err : spdlog::level::info);
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return exitCode;
}
