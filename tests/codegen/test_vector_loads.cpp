// The CUDA vector path (core/codegen/vector.cpp): a vectorized loop whose lanes touch consecutive elements from a
// multiple of the width becomes one float2/float4 (uint* for 16-bit) load per operand and one wide store; a lane
// run that is not provably aligned or contiguous, a load C evaluates only sometimes, and the CPU target keep the
// scalar form. NVRTC compiles every case for sm_90 (the PTX holds the wide instructions); on a GPU the kernels
// run and match the kernel interpreter or the reference.
#include <QtTest>

#include <functional>

#include "codegen/codegen.h"
#include "frontend/text/tsr.h"
#include "kernel/interpret.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_objects.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/from_fusion.h"

using namespace tessera;
using namespace tessera::kernel;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Buffer buffer(const std::string& name, Shape shape, BufferRole role, DType t = DType::F32) {
  Buffer b;
  b.name = name;
  b.dtype = t;
  b.shape = std::move(shape);
  b.role = role;
  return b;
}

LoopHeader loop(const std::string& v, int64_t extent, LoopKind kind = LoopKind::Serial, ThreadTag tag = ThreadTag::None) {
  LoopHeader h;
  h.var = v;
  h.extent = extent;
  h.loopKind = kind;
  h.tag = tag;
  return h;
}

Stmt nest(std::vector<LoopHeader> loops, Stmt body) {
  for (size_t i = loops.size(); i-- > 0;) body = ForStmt::make(loops[i], BlockStmt::make({body}));
  return body;
}

Expr lane(int64_t width) { return add(mul(var("j_o"), intImm(width)), var("j_i")); }

// out0[i, j] = value(in0[i, j + shift]) over rows of 8 (value: x * 2 unless given), the columns as j_o
// (threads) x j_i (`width` lanes); in0 has `inCols` columns, so its rows start at multiples of inCols.
Kernel scaledRows(int64_t inCols, int64_t shift, int64_t width, const std::function<Expr(Expr)>& value = {}) {
  Kernel k;
  k.id = "rows";
  k.kind = "pointwise";
  k.buffers = {buffer("in0", {4, inCols}, BufferRole::Input), buffer("out0", {4, 8}, BufferRole::Output)};
  Expr x = Load::make("in0", DType::F32, {var("i"), add(lane(width), intImm(shift))});
  Expr y = value ? value(x) : Binary::make(BinaryOp::Mul, x, FloatImm::make(2.0));
  k.body = BlockStmt::make({nest({loop("i", 4, LoopKind::Bound, ThreadTag::BlockX), loop("j_o", 8 / width, LoopKind::Bound, ThreadTag::ThreadX),
                                  loop("j_i", width, LoopKind::Vectorized)},
                                 StoreStmt::make("out0", {var("i"), lane(width)}, y))});
  return k;
}

// out0[i] = sum of in0[i, :64], the row read 4 lanes at a time by one thread.
Kernel rowSums() {
  Kernel k;
  k.id = "sums";
  k.kind = "reduction";
  k.buffers = {buffer("in0", {4, 64}, BufferRole::Input), buffer("out0", {4}, BufferRole::Output), buffer("acc0", {1}, BufferRole::Temp)};
  k.buffers.back().scope = MemScope::Register;
  LoopHeader ko = loop("k_o", 16), ki = loop("k_i", 4, LoopKind::Vectorized);
  ko.reduction = ki.reduction = true;
  Expr x = Load::make("in0", DType::F32, {var("i"), add(mul(var("k_o"), intImm(4)), var("k_i"))});
  Stmt sum = nest({ko, ki}, ReduceStmt::make(ReduceOp::Sum, "acc0", {intImm(0)}, x));
  Stmt row = BlockStmt::make({AllocateStmt::make("acc0"), StoreStmt::make("acc0", {intImm(0)}, FloatImm::make(0.0)), sum,
                              StoreStmt::make("out0", {var("i")}, Load::make("acc0", DType::F32, {intImm(0)}))});
  k.body = BlockStmt::make({ForStmt::make(loop("i", 4, LoopKind::Bound, ThreadTag::BlockX), row)});
  return k;
}

Tensor counting(Shape s) {
  std::vector<double> v(size_t(numElements(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25 * double(i % 37) - 3.0;
  return Tensor::fromDoubles(DType::F32, std::move(s), v);
}

cuda::NvrtcResult compileForSm90(const codegen::GeneratedKernel& g) {
  return cuda::NvrtcCompiler().compile(g.source, g.entry + ".cu", {}, "sm_90");
}

// Runs a hand-built kernel on the GPU and compares every output with the kernel interpreter's.
void runMatchesInterpreter(const Kernel& k, const std::vector<Tensor>& inputs) {
  cuda::Availability gpu = cuda::cudaAvailability();
  if (!gpu.available) {
    qInfo("%s: not run, no GPU here (%s)", k.id.c_str(), gpu.reason.c_str());
    return;
  }
  std::vector<const Tensor*> in;
  for (const Tensor& t : inputs) in.push_back(&t);
  std::vector<Tensor> expected = interpretKernel(k, in);
  codegen::GeneratedKernel g = codegen::generateCuda(k);
  cuda::CudaContext ctx(0);
  cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, g.entry + ".cu");
  QVERIFY2(r.ok, r.error.c_str());
  cuda::Module module(r.cubin);
  std::vector<cuda::DeviceBuffer> buffers;
  std::vector<cuda::DevicePtr> ptrs;
  for (const Tensor& t : inputs) {
    buffers.emplace_back(t.byteSize());
    buffers.back().upload(t.bytes().data());
  }
  for (const Tensor& t : expected) {
    buffers.emplace_back(t.byteSize());
    buffers.back().zero();
  }
  for (const auto& b : buffers) ptrs.push_back(b.ptr());
  std::vector<void*> args;
  for (auto& p : ptrs) args.push_back(&p);
  const codegen::LaunchDims& d = g.launch;
  cuda::CudaDriver::get().launch(module.function(g.entry), {{d.grid[0], d.grid[1], d.grid[2]}, {d.block[0], d.block[1], d.block[2]}, 0},
                                 args.data());
  for (size_t o = 0; o < expected.size(); ++o) {
    Tensor got(expected[o].dtype(), expected[o].shape());
    buffers[inputs.size() + o].download(got.mutableBytes().data());
    for (int64_t i = 0; i < got.numElements(); ++i)
      QVERIFY2(std::abs(got.getDouble(i) - expected[o].getDouble(i)) <= 1e-5 * (1 + std::abs(expected[o].getDouble(i))),
               (k.id + ": element " + std::to_string(i)).c_str());
  }
}

// The one kernel of a .tsr model as the executor schedules it (template defaults).
execute::CompiledModel compiled(const std::string& tsr) {
  return execute::compileKernels(compileGraph(parseTsr(tsr), CompileOptions{}), nullptr);
}

// Runs the model on the CPU and, when there is one, the GPU: every output verified against the reference.
void runsVerified(const execute::CompiledModel& m) {
  execute::RunOptions o;
  o.reps = 1;
  o.warmup = 0;
  QVERIFY(execute::executeModel(m, execute::BackendKind::Cpu, o).outputsVerified);
  cuda::Availability gpu = cuda::cudaAvailability();
  if (!gpu.available) return qInfo("GPU run skipped: no GPU here (%s)", gpu.reason.c_str());
  execute::RunReport r = execute::executeModel(m, execute::BackendKind::Cuda, o);
  std::string why;
  for (const auto& msg : r.messages) why += msg + "; ";
  QVERIFY2(r.outputsVerified, why.c_str());
}

const char* kGelu = R"(graph g {
  input %x: DT[64,256]
  input %w: DT[256]
  input %b: DT[256]
  node scale = Mul(%x, %w) -> %xw
  node shift = Add(%xw, %b) -> %h
  node act = Gelu(%h) -> %y
  output %y
}
)";

std::string gelu(const std::string& dtype) {
  std::string s = kGelu;
  for (size_t at; (at = s.find("DT")) != std::string::npos;) s.replace(at, 2, dtype);
  return s;
}

// One row op over f32[rows, cols]: Softmax, LogSoftmax, LayerNormalization or ReduceSum over the last axis.
std::string rowModel(const std::string& op, int64_t rows, int64_t cols) {
  std::string shape = "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  std::string c = std::to_string(cols);
  std::string head = "graph g {\n  input %x: f32" + shape + "\n";
  if (op == "LayerNormalization")
    return head + "  input %s: f32[" + c + "]\n  input %b: f32[" + c + "]\n" +
           "  node n = LayerNormalization(%x, %s, %b) {axis=-1, epsilon=1e-5} -> %y\n  output %y\n}\n";
  if (op == "ReduceSum")
    return head + "  const %axes: i64[1] = [1]\n  node n = ReduceSum(%x, %axes) {keepdims=0} -> %y\n  output %y\n}\n";
  return head + "  node n = " + op + "(%x) {axis=-1} -> %y\n  output %y\n}\n";
}

}  // namespace

class TestVectorLoads : public QObject {
  Q_OBJECT
 private slots:
  // The pointwise template's vector_width 4 on f32: float4 loads of x, w and b, one float4 store of y.
  void pointwiseF32IsFloat4() {
    execute::CompiledModel m = compiled(gelu("f32"));
    QCOMPARE(m.kernels.size(), size_t(1));
    QCOMPARE(m.kernels[0].kernel.params.at("vector_width"), int64_t(4));
    codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
    for (const char* operand : {"in0", "in1", "in2"})
      QVERIFY2(has(g.source, std::string("= *reinterpret_cast<const float4*>(&") + operand + "["), operand);
    QVERIFY(has(g.source, "*reinterpret_cast<float4*>(&out0["));
    QCOMPARE(g.lineNodes.size(), size_t(std::count(g.source.begin(), g.source.end(), '\n')));
    QVERIFY(!has(codegen::generateCpp(m.kernels[0].kernel).source, "float4"));
    // The same loop in C++ is the CPU vector path's, erf included (the prelude's tsr_verf).
    QVERIFY(has(codegen::generateCpp(m.kernels[0].kernel).source, "tsr_verf("));
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    cuda::NvrtcResult r = compileForSm90(g);
    QVERIFY2(r.ok, r.error.c_str());
    QVERIFY(has(r.ptx, "ld.global.nc.v4.f32"));
    QVERIFY(has(r.ptx, "st.global.v4.f32"));
    runsVerified(m);
  }

  // 16-bit elements move as raw words: 4 f16 lanes are one 8-byte uint2 load or store.
  void pointwiseF16IsUint2() {
    execute::CompiledModel m = compiled(gelu("f16"));
    codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
    QVERIFY(has(g.source, "alignas(8) __half lanes_in0[4];"));
    QVERIFY(has(g.source, "= *reinterpret_cast<const uint2*>(&in0["));
    QVERIFY(has(g.source, "*reinterpret_cast<uint2*>(&out0["));
    QVERIFY(has(g.source, "__half2float(lanes_in0["));
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    cuda::NvrtcResult r = compileForSm90(g);
    QVERIFY2(r.ok, r.error.c_str());
    QVERIFY(has(r.ptx, "ld.global.nc.v2.u32"));
    QVERIFY(has(r.ptx, "st.global.v2.u32") || has(r.ptx, "st.global.v4.u16"));  // one 8-byte store either way
    QVERIFY(!has(r.ptx, "st.global.u16") && !has(r.ptx, "st.global.b16"));
    runsVerified(m);
  }

  // A [8, 1] operand broadcast along rows of 12: every lane of a group reads the same element (12 is a
  // multiple of 4, so no group crosses a row), loaded once before the lanes.
  void broadcastOperandIsLoadedOnce() {
    execute::CompiledModel m = compiled("graph g {\n  input %x: f32[8,12]\n  input %s: f32[8,1]\n"
                                        "  node add = Add(%x, %s) -> %y\n  output %y\n}\n");
    codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
    QVERIFY(has(g.source, "= *reinterpret_cast<const float4*>(&in0["));
    QVERIFY(has(g.source, "const float bcast_in1 = in1["));
    QVERIFY(!has(g.source, "lanes_in1"));
    runsVerified(m);
  }

  // Rows of 6 with 4 lanes: a group crosses rows, but the rows are one run of 48 floats (the row index and
  // the column, f / 6 · 6 + f % 6, join back into f), so the accesses are wide. A [8, 1] operand broadcast
  // along those rows is not one run (f / 6 moves within a group): it stays scalar.
  void rowsNotAMultipleOfTheWidthAreOneRun() {
    execute::CompiledModel m = compiled("graph g {\n  input %x: f32[8,6]\n  node r = Relu(%x) -> %y\n  output %y\n}\n");
    QCOMPARE(m.kernels[0].kernel.params.at("vector_width"), int64_t(4));
    codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
    QVERIFY(has(g.source, "= *reinterpret_cast<const float4*>(&in0["));
    runsVerified(m);
    execute::CompiledModel b = compiled("graph g {\n  input %x: f32[8,6]\n  input %s: f32[8,1]\n"
                                        "  node add = Add(%x, %s) -> %y\n  output %y\n}\n");
    codegen::GeneratedKernel gb = codegen::generateCuda(b.kernels[0].kernel);
    QVERIFY(has(gb.source, "= *reinterpret_cast<const float4*>(&in0["));
    QVERIFY(!has(gb.source, "reinterpret_cast<const float4*>(&in1["));
    runsVerified(b);
  }

  // Hand-built: in0's rows of 10 start at multiples of 2, not of 4. Four lanes load it as scalars (the
  // store to out0, rows of 8, stays wide); two lanes may load it as float2.
  void misalignedOperandFallsBackAlone() {
    Kernel four = scaledRows(10, 0, 4);
    codegen::GeneratedKernel g = codegen::generateCuda(four);
    QVERIFY(!has(g.source, "lanes_in0"));
    QVERIFY(has(g.source, "lanes_out0[j_i] = (in0[(i) * 10 + ((j_o * 4) + j_i)] * 2.0f);"));
    QVERIFY(has(g.source, "*reinterpret_cast<float4*>(&out0[((i * 8) + (j_o * 4))]) = "));
    Kernel two = scaledRows(10, 0, 2);
    codegen::GeneratedKernel g2 = codegen::generateCuda(two);
    QVERIFY(has(g2.source, "= *reinterpret_cast<const float2*>(&in0[((i * 10) + (j_o * 2))]);"));
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    for (const auto* gen : {&g, &g2}) {
      cuda::NvrtcResult r = compileForSm90(*gen);
      QVERIFY2(r.ok, r.error.c_str());
    }
    runMatchesInterpreter(four, {counting({4, 10})});
    runMatchesInterpreter(two, {counting({4, 10})});
  }

  // Hand-built: in0[i, j + 1] starts one element past a multiple of 4: scalar loads.
  void offsetOperandFallsBack() {
    Kernel k = scaledRows(9, 1, 4);
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QVERIFY(!has(g.source, "lanes_in0"));
    QVERIFY(has(g.source, "lanes_out0"));
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    cuda::NvrtcResult r = compileForSm90(g);
    QVERIFY2(r.ok, r.error.c_str());
    runMatchesInterpreter(k, {counting({4, 9})});
  }

  // A load under a select arm runs only for the lanes taking it (it may be out of bounds for the others):
  // it stays a scalar load inside the lanes.
  void loadUnderSelectArmStaysScalar() {
    Kernel k = scaledRows(8, 0, 4, [](Expr x) { return Select::make(Binary::make(BinaryOp::Lt, lane(4), intImm(6)), x, FloatImm::make(0.0)); });
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QVERIFY(!has(g.source, "lanes_in0"));
    QVERIFY(has(g.source, "? in0[(i) * 8 + ((j_o * 4) + j_i)] : 0.0f)"));
    QVERIFY(has(g.source, "lanes_out0"));
  }

  // The row-reduction template's default vector_width (4 on rows of 8192): every pass reads the row as one float4
  // per thread a step and the output pass stores float4; the C++ form unrolls the reduction lanes in order
  // (omp simd would race on the accumulator). Runs verified on the CPU (and the GPU when there is one).
  void rowReductionsReadFloat4() {
    for (const char* op : {"Softmax", "LayerNormalization", "LogSoftmax", "ReduceSum"}) {
      execute::CompiledModel m = compiled(rowModel(op, 4, 8192));
      QCOMPARE(m.kernels.size(), size_t(1));
      const Kernel& k = m.kernels[0].kernel;
      QCOMPARE(k.params.at("vector_width"), int64_t(4));
      codegen::GeneratedKernel g = codegen::generateCuda(k);
      QVERIFY2(has(g.source, "= *reinterpret_cast<const float4*>(&in0["), op);
      QVERIFY2(has(g.source, "tsr_red"), op);  // the threads' partial results are still combined
      std::string cpp = codegen::generateCpp(k).source;
      QVERIFY2(has(cpp, "#pragma GCC unroll 4"), op);
      if (std::string(op) == "ReduceSum") QVERIFY(!has(cpp, "#pragma omp simd"));
      if (std::string(op) != "ReduceSum") QVERIFY2(has(g.source, "*reinterpret_cast<float4*>(&out0["), op);
      if (TESSERA_HAVE_CUDA) {
        cuda::NvrtcResult r = compileForSm90(g);
        QVERIFY2(r.ok, r.error.c_str());
        QVERIFY2(has(r.ptx, "ld.global.nc.v4.f32"), op);
      }
      runsVerified(m);
    }
    // Rows of 42: the default width is 1 (32 threads x 2 lanes would pass the row's end).
    execute::CompiledModel odd = compiled(rowModel("Softmax", 3, 42));
    QCOMPARE(odd.kernels[0].kernel.params.at("vector_width"), int64_t(1));
    runsVerified(odd);
  }

  // Rows of 1024 keep the row in shared memory (cache_row): the fill reads float4 from global and stores float4
  // to the 16-byte aligned shared row, and the passes read it as float4 (a warp's 512 bytes, conflict-free).
  void sharedRowIsReadWide() {
    execute::CompiledModel m = compiled(rowModel("Softmax", 4, 1024));
    const Kernel& k = m.kernels[0].kernel;
    QCOMPARE(k.params.at("cache_row"), int64_t(1));
    QCOMPARE(k.params.at("vector_width"), int64_t(4));
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QVERIFY(has(g.source, "__shared__ __align__(16) float in0_shared[1024];"));
    QVERIFY(has(g.source, "*reinterpret_cast<float4*>(&in0_shared["));
    QVERIFY(has(g.source, "= *reinterpret_cast<const float4*>(&in0_shared["));
    if (TESSERA_HAVE_CUDA) {
      cuda::NvrtcResult r = compileForSm90(g);
      QVERIFY2(r.ok, r.error.c_str());
      QVERIFY(has(r.ptx, "ld.shared.v4.f32"));
      QVERIFY(has(r.ptx, "st.shared.v4.f32"));
    }
    runsVerified(m);
  }

  // A reduction whose lanes are a vectorized loop reads the row 4 floats at a time; the lanes add in order.
  void reductionLanesReadWide() {
    Kernel k = rowSums();
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QVERIFY(has(g.source, "= *reinterpret_cast<const float4*>(&in0[((i * 64) + (k_o * 4))]);"));
    QVERIFY(has(g.source, "acc0[0] = acc0[0] + lanes_in0[k_i];"));
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    cuda::NvrtcResult r = compileForSm90(g);
    QVERIFY2(r.ok, r.error.c_str());
    QVERIFY(has(r.ptx, "ld.global.nc.v4.f32"));
    runMatchesInterpreter(k, {counting({4, 64})});
  }
};

QTEST_GUILESS_MAIN(TestVectorLoads)
#include "test_vector_loads.moc"
