#include "ui/schedule/schedule_edit.h"

namespace tessera::ui {

kernel::TemplateParams paramsOfTrace(const kernel::Trace& trace) {
  kernel::TemplateParams p;
  for (const kernel::Instruction& ins : trace.instructions)
    if (ins.kind == "set_param" && !ins.inputs.empty() && ins.decision.is_number_integer())
      p[ins.inputs.front()] = ins.decision.get<int64_t>();
  return p;
}

}  // namespace tessera::ui
