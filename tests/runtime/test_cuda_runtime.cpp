#include <QtTest>

#include <cstdlib>
#include <thread>
#include <vector>

#include "ir/error.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_objects.h"
#include "runtime/cuda/cuda_timing.h"
#include "runtime/cuda/nvrtc_compiler.h"

using namespace tessera;
using namespace tessera::cuda;

namespace {

const char* kAdd = R"(extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestCudaRuntime : public QObject {
  Q_OBJECT
 private slots:
  // NVRTC is opened at run time: without it (test_cuda_runtime_no_nvrtc names a missing file) a compile fails
  // saying what to install, and the program itself started.
  void missingNvrtcSaysWhatToInstall() {
    if (!qEnvironmentVariableIsSet("TESSERA_NVRTC")) QSKIP("for test_cuda_runtime_no_nvrtc ($TESSERA_NVRTC names a missing library)");
#if !TESSERA_HAVE_CUDA
    QSKIP("built without CUDA: there is no NVRTC to open");
#endif
    try {
      NvrtcCompiler().compile("extern \"C\" __global__ void k() {}", "k.cu");
      QFAIL("compiled without NVRTC");
    } catch (const Error& e) {
      QVERIFY2(contains(e.what(), "is not installed, so CUDA kernels cannot be compiled here"), e.what());
      QVERIFY2(contains(e.what(), "cuda-nvrtc-"), e.what());
    }
  }

  void availabilityHasAReason() {
    Availability a = cudaAvailability();
    qInfo("CUDA available: %s (%s)", a.available ? "yes" : "no", a.reason.c_str());
    QVERIFY(!a.reason.empty());
    if (const char* expected = std::getenv("TESSERA_EXPECT_CUDA_REASON"))  // set by the driver-stub run
      QCOMPARE(QString::fromStdString(a.reason), QString(expected));
    if (a.available) return;
    QVERIFY2(a.reason.rfind("no libcuda.so.1 (NVIDIA's driver; on Debian:", 0) == 0 || a.reason == "driver stub (cuInit 34)" ||
                 a.reason == "no device (cuInit 100)" || a.reason == "built without CUDA",
             a.reason.c_str());
    try {
      CudaDriver::get();
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(contains(e.what(), a.reason), e.what());
    }
    QVERIFY_THROWS_EXCEPTION(Error, CudaContext(0));
  }
  void nvrtcCompilesForSm90() {
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    qInfo("NVRTC %s", NvrtcCompiler::version().c_str());
    QVERIFY(contains(NvrtcCompiler::version(), "."));
    auto archs = NvrtcCompiler::supportedArchs();
    QVERIFY(std::find(archs.begin(), archs.end(), "sm_90") != archs.end());
    NvrtcResult r = NvrtcCompiler().compile(kAdd, "add.cu", {"-lineinfo"}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    QCOMPARE(QString::fromStdString(r.arch), QString("sm_90"));
    QVERIFY(contains(r.ptx, ".target sm_90"));
    QVERIFY(contains(r.ptx, ".entry add("));
    QVERIFY(r.cubin.size() > 64);
    QCOMPARE(std::string(r.cubin.data(), 4), std::string("\x7f" "ELF"));
    QVERIFY(contains(r.options.back(), "-lineinfo"));
    qInfo("add.cu: %zu bytes PTX, %zu bytes cubin in %.0f ms", r.ptx.size(), r.cubin.size(), r.compileMs);
  }
  void nvrtcDefaultArchWithoutGpuIsSm90() {
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    if (cudaAvailability().available) QSKIP("a GPU is present: the default is its architecture");
    QCOMPARE(QString::fromStdString(NvrtcCompiler::defaultArch()), QString("sm_90"));
    NvrtcResult r = NvrtcCompiler().compile(kAdd, "add.cu");
    QVERIFY2(r.ok, r.error.c_str());
    QCOMPARE(QString::fromStdString(r.arch), QString("sm_90"));
  }
  void nvrtcSyntaxErrorNamesTheLine() {
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    std::string bad = "extern \"C\" __global__ void k(float* x) {\n  float y = 1.0f;\n  x[0] = y +;\n}\n";
    NvrtcResult r = NvrtcCompiler().compile(bad, "broken.cu", {}, "sm_90");
    QVERIFY(!r.ok);
    qInfo("%s", r.error.c_str());
    QVERIFY2(contains(r.error, "NVRTC could not compile 'broken.cu': broken.cu(3): error"), r.error.c_str());
    QVERIFY(r.cubin.empty() && r.ptx.empty());
    QVERIFY(contains(r.log, "1 error detected"));
  }
  void nvrtcRejectsO3AsMessage() {
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    NvrtcResult r = NvrtcCompiler().compile(kAdd, "add.cu", {"-O3"}, "sm_90");
    QVERIFY(!r.ok);
    qInfo("%s", r.error.c_str());
    QVERIFY2(contains(r.error, "'add.cu'"), r.error.c_str());
  }
  void nvrtcCompilesOnTwoThreadsAtOnce() {
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    NvrtcResult first, second;
    std::thread other([&] { first = NvrtcCompiler().compile(kAdd, "first.cu", {}, "sm_90"); });
    second = NvrtcCompiler().compile(kAdd, "second.cu", {}, "sm_90");
    other.join();
    QVERIFY2(first.ok && second.ok, (first.error + second.error).c_str());
    QCOMPARE(first.ptx, second.ptx);
  }
  void nvrtcFindsToolkitHeaders() {
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    NvrtcCompiler nvrtc;
    bool hasInclude = false;
    for (const auto& o : nvrtc.baseOptions()) hasInclude |= contains(o, "--include-path=");
    if (!hasInclude) QSKIP("the CUDA toolkit's include folder is not on this machine");
    std::string src = "#include <cuda_fp16.h>\nextern \"C\" __global__ void h(__half* x) { x[0] = __float2half(1.5f); }\n";
    NvrtcResult r = nvrtc.compile(src, "half.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
  }
  void builtWithoutCudaSaysSo() {
    if (TESSERA_HAVE_CUDA) QSKIP("built with CUDA");
    QCOMPARE(QString::fromStdString(cudaAvailability().reason), QString("built without CUDA"));
    try {
      NvrtcCompiler().compile(kAdd, "add.cu");
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(contains(e.what(), "CUDA is unavailable in this build"), e.what());
    }
  }
  // Runs on a GPU machine: compile, load, launch, check every value, time, and report driver errors.
  void gpuLaunchesVectorAdd() {
    Availability avail = cudaAvailability();
    if (!avail.available) QSKIP(("no GPU here: " + avail.reason).c_str());
    CudaContext ctx(0);
    const DeviceInfo& dev = ctx.device();
    qInfo("%s: %s, %d SMs, %d KiB shared/block opt-in, %d regs/SM, driver %d", dev.name.c_str(), dev.arch().c_str(),
          dev.smCount, dev.sharedMemPerBlockOptin / 1024, dev.registersPerSm, CudaDriver::get().driverVersion());
    QVERIFY(dev.smCount > 0 && dev.major >= 7);
    NvrtcResult r = NvrtcCompiler().compile(kAdd, "add.cu");
    QVERIFY2(r.ok, r.error.c_str());
    QCOMPARE(r.arch, dev.arch());
    Module module(r.cubin);
    FunctionHandle add = module.function("add");
    QVERIFY(CudaDriver::get().functionInfo(add).registersPerThread > 0);
    int n = 1 << 20;
    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (int i = 0; i < n; ++i) a[i] = 0.5f * i, b[i] = 3.0f;
    size_t bytes = sizeof(float) * n;
    DeviceBuffer da(bytes), db(bytes), dc(bytes);
    da.upload(a.data());
    db.upload(b.data());
    dc.zero();
    DevicePtr pa = da.ptr(), pb = db.ptr(), pc = dc.ptr();
    void* args[] = {&pa, &pb, &pc, &n};
    LaunchConfig cfg{{static_cast<unsigned>((n + 255) / 256)}, {256}, 0};
    double ms = medianKernelMs(add, cfg, args, 3, 10);
    dc.download(c.data());
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += c[i] != 0.5f * i + 3.0f;
    QCOMPARE(bad, 0);
    QCOMPARE(c[7], 6.5f);
    qInfo("add over 1M floats: %.4f ms median, %.0f GB/s", ms, 3.0 * bytes / (ms * 1e6));
    QVERIFY(ms > 0 && ms < 100);
    // Driver errors come back as messages naming the call.
    try {
      module.function("absent_kernel");
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(contains(e.what(), "cuModuleGetFunction('absent_kernel')"), e.what());
    }
    try {
      CudaDriver::get().launch(add, LaunchConfig{{1}, {4096}, 0}, args);  // more threads than a block may hold
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(contains(e.what(), "cuLaunchKernel(grid 1x1x1, block 4096x1x1"), e.what());
      QVERIFY2(contains(e.what(), "CUDA_ERROR_INVALID_VALUE"), e.what());
    }
    CudaDriver::get().synchronize();  // the refused launch left the context usable
  }
  // Driver calls act on the calling thread's current context: a worker must make it current first.
  void gpuWorkerThreadNeedsMakeCurrent() {
    Availability avail = cudaAvailability();
    if (!avail.available) QSKIP(("no GPU here: " + avail.reason).c_str());
    CudaContext ctx(0);
    std::string withoutError, withError;
    std::thread([&] {
      try {
        DeviceBuffer b(64);
      } catch (const Error& e) {
        withoutError = e.what();
      }
      try {
        ctx.makeCurrent();
        DeviceBuffer b(64);
        b.zero();
      } catch (const Error& e) {
        withError = e.what();
      }
    }).join();
    QVERIFY2(contains(withoutError, "cuMemAlloc(64 bytes) failed: CUDA_ERROR_INVALID_CONTEXT"), withoutError.c_str());
    QVERIFY2(withError.empty(), withError.c_str());
  }
  // Last, since a faulting kernel leaves the context unusable for the rest of the process.
  void gpuKernelFaultIsAMessage() {
    Availability avail = cudaAvailability();
    if (!avail.available) QSKIP(("no GPU here: " + avail.reason).c_str());
    CudaContext ctx(0);
    NvrtcResult r = NvrtcCompiler().compile(
        "extern \"C\" __global__ void fault(float* p) { p[threadIdx.x] = 1.0f; }\n", "fault.cu");
    QVERIFY2(r.ok, r.error.c_str());
    Module module(r.cubin);
    DevicePtr null = 0;
    void* args[] = {&null};
    CudaDriver::get().launch(module.function("fault"), LaunchConfig{{1}, {32}, 0}, args);
    try {
      CudaDriver::get().synchronize();
      QFAIL("no error");
    } catch (const Error& e) {
      qInfo("%s", e.what());
      QVERIFY2(contains(e.what(), "cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)"), e.what());
      QVERIFY2(contains(e.what(), "can no longer be used"), e.what());
    }
  }  // the owners' destructors meet the poisoned context and stay quiet
};

QTEST_GUILESS_MAIN(TestCudaRuntime)
#include "test_cuda_runtime.moc"
