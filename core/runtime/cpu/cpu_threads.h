#pragma once
// The OpenMP team the generated CPU kernels run with: the cpu worker's OMP_NUM_THREADS. One setting for the
// process, as OpenMP's own variable is: `tessera-cli run --threads N`, the window's Run > CPU threads….

namespace tessera::cpu {

// n > 0: workers started from now on run n threads; 0: $OMP_NUM_THREADS decides, else every hardware thread.
void setCpuThreads(int n);
int cpuThreadsSetting();  // what setCpuThreads set (0: none)
// The team a worker starts with: the setting, else $OMP_NUM_THREADS (its first number), else the hardware threads.
int cpuThreads();

}  // namespace tessera::cpu
