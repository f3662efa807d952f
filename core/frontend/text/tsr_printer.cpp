#include "frontend/text/tsr.h"
#include "ir/error.h"
namespace tessera {
std::string printTsr(const Graph&, const TsrPrintOptions&) { fail("printTsr: not written yet"); }
void writeTsrFile(const Graph&, const std::string& path) { fail(path + ": .tsr writer not written yet"); }
}  // namespace tessera
