#pragma once
// The messages between a remote backend (remote_backend.cpp) and a worker (worker_server.h), each one binary
// WebSocket message: a JSON header, then raw bytes (the tensors). A request names an operation on data —
// hello (the token), build (generated source), run (a kernel's buffers) — never a command to execute.
//
//   hello  {op, token, client}               → {ok, worker: {backend, device, arch, cannot_run, target, max_request_bytes}}
//   build  {op, kernels: [kernel...]}        → {ok, builds: [{error, cached, compile_ms, warning}]}
//   run    {op, kernel, warmup, reps, budget_ms, params: [{bytes, output, record}]} + inputs' bytes
//                                            → {ok, ms} + outputs' bytes
//   ping   {op}                              → {ok}
//   any failure                              → {ok: false, error}
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/codegen.h"
#include "runtime/execute/backend.h"

namespace tessera::remote {

// A request or reply: its header and its payload.
struct Message {
  nlohmann::json header;
  std::string payload;
};

std::string encodeMessage(const Message& m);
// Throws Error for bytes that are not a message ("remote: message of N bytes ...").
Message decodeMessage(const std::string& bytes);

// A reply that says why a request failed.
Message errorReply(const std::string& error);

// A generated kernel: what a backend needs to build and launch it (not its source map or index checks, which
// stay with the client that reads the run's results).
nlohmann::json kernelToJson(const codegen::GeneratedKernel& k);
codegen::GeneratedKernel kernelFromJson(const nlohmann::json& j);  // throws Error naming the field

nlohmann::json buildToJson(const execute::detail::KernelBuild& b);
execute::detail::KernelBuild buildFromJson(const nlohmann::json& j);

// Which parameters' bytes a run request carries (inputs, and the zeroed error records) and which its reply
// carries (outputs).
inline bool sentToWorker(const execute::detail::ParamBuffer& p) { return !p.output || p.record; }

// The port a worker listens on by default.
constexpr uint16_t kDefaultPort = 7461;

}  // namespace tessera::remote
