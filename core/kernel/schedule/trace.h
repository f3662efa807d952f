#pragma once
// A schedule is a trace: every primitive applied through TracedSchedule is appended as
// {kind, inputs, attrs, outputs, decision}. A trace saves as JSON and replays on a fresh kernel (lowered
// again from the same KernelSpec) to identical kernel IR; replay checks that each step creates the names
// it recorded. `decision` holds the value a tuner or a user may swap (set_param's value).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/schedule/schedule.h"

namespace tessera::kernel {

struct Instruction {
  std::string kind;                  // split, tile, reorder, fuse, vectorize, overcompute, version, unroll, parallel, bind,
                                     // cache_read, cache_write, compute_at, hoist_reduction,
                                     // keep_in_registers, online_softmax, rfactor, split_reduction, split_k,
                                     // pipeline, swizzle, deinterleave, permute, pack, set_param
  std::vector<std::string> inputs;   // loop, buffer or parameter names
  nlohmann::json attrs = nlohmann::json::object();
  std::vector<std::string> outputs;  // names created
  nlohmann::json decision;           // null unless the step has one
  friend bool operator==(const Instruction&, const Instruction&) = default;
};

struct Trace {
  std::vector<Instruction> instructions;
  nlohmann::json toJson() const;
  static Trace fromJson(const nlohmann::json& j);  // throws Error naming the bad field
  std::string save() const;                          // pretty JSON text
  static Trace load(const std::string& text);        // throws Error on malformed text
  friend bool operator==(const Trace&, const Trace&) = default;
};

// Applies one instruction (without recording it) and returns the names it created.
std::vector<std::string> applyInstruction(Kernel& k, const Instruction& ins);
// Re-applies a whole trace; throws Error when a step creates other names than recorded.
void replay(Kernel& k, const Trace& trace);
// Re-applies the first `steps` instructions (all when there are fewer): the kernel as the schedule had made it
// after that many primitives, to show them one at a time. Throws as replay does.
void replayPrefix(Kernel& k, const Trace& trace, size_t steps);
// One line for an instruction: "split i by 64 -> i_o, i_i", "set_param block_m = 64".
std::string describeInstruction(const Instruction& ins);

// The traced wrapper: each call applies the primitive and appends it to the trace.
class TracedSchedule {
 public:
  explicit TracedSchedule(Kernel& k) : k_(k) {}
  Kernel& kernel() { return k_; }
  const Trace& trace() const { return trace_; }

  std::vector<std::string> split(const std::string& loop, int64_t factor);
  std::vector<std::string> tile(const std::vector<std::string>& loops, const std::vector<int64_t>& factors);
  void reorder(const std::vector<std::string>& order);
  std::string fuse(const std::string& outer, const std::string& inner);
  void vectorize(const std::string& loop);
  void overcompute(const std::string& loop);
  std::string version(const std::string& loop);
  void unroll(const std::string& loop);
  void parallel(const std::string& loop);
  void bind(const std::string& loop, ThreadTag tag);
  std::vector<std::string> cacheRead(const std::string& loop, const std::string& buffer, MemScope scope, int64_t pad = 0,
                                     int64_t padRows = 0, int64_t align = 0);
  std::vector<std::string> cacheWrite(const std::string& loop, const std::string& buffer, MemScope scope);
  std::vector<std::string> computeAt(const std::string& cache, const std::string& loop);
  std::vector<std::string> hoistReduction(const std::string& reduction, const std::string& loop);
  std::vector<std::string> keepInRegisters(const std::string& loop, const std::string& buffer);
  std::vector<std::string> rfactor(const std::string& loop);
  std::vector<std::string> onlineSoftmax(const std::string& loop);
  std::vector<std::string> splitReduction(const std::string& loop, int64_t blocks);
  std::vector<std::string> splitK(const std::string& loop, int64_t parts);
  void pipeline(const std::string& loop, int stages);
  void swizzle(const std::string& buffer, int64_t bytes);
  void deinterleave(const std::string& buffer, int64_t factor);
  void permute(const std::string& buffer, const std::vector<int64_t>& perm);
  void pack(const std::string& buffer, int64_t axis, int64_t block);
  // Records a template parameter; returns the value in effect (the decision).
  int64_t setParam(const std::string& name, int64_t value);

 private:
  std::vector<std::string> record(Instruction ins);
  Kernel& k_;
  Trace trace_;
};

}  // namespace tessera::kernel
