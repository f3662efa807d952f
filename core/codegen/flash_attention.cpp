// Flash attention on the tensor cores (docs/codegen.md, Flash attention). The attention template's
// tensor_cores = 1 form splits the query rows into warps of 16 (a loop bound to `warp`, then a loop of at most
// 16 rows); that row loop's body is the lowered online-softmax row (kernel/attention_nest.h), which this file
// generates for the warp's rows together, FlashAttention-2's way: the keys and values in tiles of key_tile rows
// in shared memory (`stages` copies, cp.async), S = Q·Kᵀ for the tile as mma.sync m16n8k16 with Q's fragments kept in
// registers, the graph's own chain between the products (a scale, a mask) on each score, the tile's row maxima
// across the four lanes of a quad, one rescale of the output per tile, and P·V with P taken from the score
// accumulators as the A fragments (the m16n8 accumulator layout of two adjacent tiles is the m16k16 A layout),
// rounded to the operands' 16-bit type. The kernel IR keeps its row-at-a-time meaning (the interpreter runs it);
// only the instructions differ, as with the gemm's mma and wgmma forms. Anything that does not match runs as
// written.
#include "codegen/generator.h"
#include "kernel/attention_nest.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {

int64_t param(const Kernel& k, const std::string& name, int64_t absent) {
  auto p = k.params.find(name);
  return p == k.params.end() ? absent : p->second;
}

// Reads loads of the named register accumulators as the given locals instead (an ExprFn for mapExpr).
ExprFn loadsAsLocals(const std::map<std::string, std::string>& locals) {
  return [&locals](const Expr& e) -> Expr {
    if (e->kind != ExprKind::Load) return e;
    auto it = locals.find(static_cast<const Load&>(*e).buffer);
    return it == locals.end() ? e : Var::make(it->second, static_cast<const Load&>(*e).dtype);
  };
}

// A copy of `s` with those loads read as the locals.
Stmt withLocals(const Stmt& s, const std::map<std::string, std::string>& locals) {
  Stmt c = cloneStmt(s);
  mapAllExprs(c, loadsAsLocals(locals));
  return c;
}

std::string n(int64_t v) { return std::to_string(v); }

}  // namespace

// The sizes of one kernel's form: the head of q and k, v's head, the keys, the keys a tile (S is 16 x tile a
// warp, tile / 2 registers a lane), the copies of the key and value tiles in flight, and the padded rows of the shared tiles (16 bytes more than the head, so
// that ldmatrix's 8 rows fall in distinct banks).
struct FlashShape {
  int64_t depth = 0, width = 0, keys = 0, tile = 64, stages = 2, qs = 0, vs = 0;
  int64_t mtiles = 1;  // the warp's rows in m-tiles of 16 (warp_rows 32: two, sharing each K and V fragment)
};

// `rowValid`: this lane's row (the row loop's variable) is one of the loop's rows and passes the guards around
// the row body.
std::string Generator::flashRowValid(const ForStmt& rows, const AttentionNest& nest) {
  std::string valid = identifier(rows.h.var) + " < " + n(rows.h.extent);
  for (const Expr& g : nest.guards) valid += " && (" + ep_.print(g) + ")";
  return valid;
}

// The 16-byte copies of one operand tile: `rows` rows of `width` elements from `load` (its row variable
// `rowVar` = `rowValue` of the tile's row tsr_r, its head variable `colVar`) into the shared array `dst` with
// rows of `stride` elements, by `threads` threads (`thread` the index of this one), each taking the same
// column of rows `threads / chunks` apart, so that the copies unroll with their rows and columns known;
// rows where `inside` fails are zero-filled (cp.async reading 0 bytes), so no NaN of memory past the keys
// reaches a product.
void Generator::flashFill(const Load& load, const std::string& rowVar, const std::string& rowValue, const std::string& colVar,
                          int64_t rows, int64_t width, const std::string& dst, int64_t stride, const std::string& thread,
                          int64_t threads, const std::string& inside) {
  int64_t chunks = width / 8, rowStep = threads / chunks, steps = (rows + rowStep - 1) / rowStep;
  line("#pragma unroll");
  line("for (int tsr_u = 0; tsr_u < " + n(steps) + "; ++tsr_u) {");
  ++indent_;
  line("const int tsr_r = " + thread + " / " + n(chunks) + " + tsr_u * " + n(rowStep) + ", tsr_c8 = " + thread + " % " +
       n(chunks) + " * 8;");
  if (steps * rowStep > rows) line("if (tsr_r >= " + n(rows) + ") break;");
  line("const long long " + identifier(rowVar) + " = " + rowValue + ";");
  line("const long long " + identifier(colVar) + " = tsr_c8;");
  line("const bool tsr_in = " + inside + ";");
  std::string src = identifier(load.buffer);
  line("tsr_cp16(" + dst + " + tsr_r * " + n(stride) + " + tsr_c8, tsr_in ? " + src + " + (" +
       ep_.linear(load.buffer, load.indices) + ") : " + src + ", tsr_in);");
  --indent_;
  line("}");
}

// The helpers the form's lines call: a 16-byte cp.async, one mma.sync, an ldmatrix.x4, two floats rounded into
// one register of the operands' type, and 2^x on the special function unit.
void Generator::flashHelpers(DType t) {
  bool bf = t == DType::BF16;
  std::string mt = bf ? "bf16" : "f16";
  line("auto tsr_cp16 = [](void* dst, const void* src, bool in) {");
  line("  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" :: \"r\"((unsigned)__cvta_generic_to_shared(dst)), "
       "\"l\"(src), \"r\"(in ? 16 : 0) : \"memory\");");
  line("};");
  line("auto tsr_mma = [](float* C, const unsigned* A, unsigned B0, unsigned B1) {");
  line("  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32." + mt + "." + mt +
       ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\\n\" : \"+f\"(C[0]), \"+f\"(C[1]), \"+f\"(C[2]), "
       "\"+f\"(C[3]) : \"r\"(A[0]), \"r\"(A[1]), \"r\"(A[2]), \"r\"(A[3]), \"r\"(B0), \"r\"(B1));");
  line("};");
  line("auto tsr_ldm4 = [](unsigned* R, const void* p, bool trans) {");
  line("  unsigned s = (unsigned)__cvta_generic_to_shared(p);");
  line("  if (trans) asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\\n\" : \"=r\"(R[0]), "
       "\"=r\"(R[1]), \"=r\"(R[2]), \"=r\"(R[3]) : \"r\"(s));");
  line("  else asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\\n\" : \"=r\"(R[0]), \"=r\"(R[1]), "
       "\"=r\"(R[2]), \"=r\"(R[3]) : \"r\"(s));");
  line("};");
  line(std::string("auto tsr_pk = [](float lo, float hi) { ") + (bf ? "__nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);"
                                                                      : "__half2 h = __floats2half2_rn(lo, hi);") +
       " return *reinterpret_cast<unsigned*>(&h); };");
  line("auto tsr_ex2 = [](float x) { float y; asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); return y; };");
}

bool Generator::flashAttentionRows(const ForStmt& rows) {
  if (target_ != Target::Cuda || warpDepth_ == 0 || rows.h.extent > 32 || rows.h.loopKind != LoopKind::Serial ||
      param(k_, "tensor_cores", 0) != 1 || out_.launch.block[1] != 1 || out_.launch.block[2] != 1)
    return false;
  std::optional<AttentionNest> nest = attentionNest(k_, rows.body);
  if (!nest || !tensorCoreRefusal(k_, *nest).empty()) return false;
  const AttentionNest& a = *nest;
  const std::vector<std::string> prov = rows.provenance;
  DType t = k_.findBuffer(a.q->buffer)->dtype;
  std::string st = t == DType::BF16 ? "__nv_bfloat16" : "__half";
  FlashShape f;
  f.depth = a.depth->h.extent, f.width = a.values->h.extent, f.keys = a.keys->h.extent;
  f.tile = param(k_, "key_tile", 64), f.stages = param(k_, "stages", 2), f.qs = f.depth + 8, f.vs = f.width + 8;
  f.mtiles = (rows.h.extent + 15) / 16;
  int64_t warps = out_.launch.block[0] / 32, tiles = (f.keys + f.tile - 1) / f.tile, warpRows = 16 * f.mtiles;
  std::string row = identifier(rows.h.var), valid = flashRowValid(rows, a), m = n(f.mtiles);
  line("{  // flash attention on the tensor cores: this warp's " + n(rows.h.extent) + " query rows, the " + n(f.keys) +
           " keys in tiles of " + n(f.tile) + comment(prov),
       prov);
  ++indent_;
  line("const int tsr_lane = threadIdx.x % 32, tsr_warp = threadIdx.x / 32;");
  line(sharedArray(st, "tsr_qs", n(warps * warpRows * f.qs), warps * warpRows * f.qs, 2));
  line(sharedArray(st, "tsr_ks", n(f.stages * f.tile * f.qs), f.stages * f.tile * f.qs, 2));
  line(sharedArray(st, "tsr_vs", n(f.stages * f.tile * f.vs), f.stages * f.tile * f.vs, 2));
  flashHelpers(t);
  line(st + "* const tsr_q = tsr_qs + tsr_warp * " + n(warpRows * f.qs) + ";  // this warp's rows of q");
  // q: this warp's rows, zero where a row is past the loop or its guards.
  flashFill(*a.q, rows.h.var, "tsr_r", a.depth->h.var, warpRows, f.depth, "tsr_q", f.qs, "tsr_lane", 32, valid);
  line("bool tsr_rows[" + m + "][2];  // this lane's rows 16mt + g and 16mt + g + 8 are rows of the loop");
  line("#pragma unroll");
  line("for (int tsr_mt = 0; tsr_mt < " + m + "; ++tsr_mt)");
  line("#pragma unroll");
  line("  for (int tsr_h = 0; tsr_h < 2; ++tsr_h) {");
  line("    const long long " + row + " = tsr_mt * 16 + tsr_lane / 4 + tsr_h * 8;");
  line("    tsr_rows[tsr_mt][tsr_h] = " + valid + ";");
  line("  }");
  line("auto tsr_fill = [&](int tsr_kt, int tsr_stage) {  // one tile of keys and values into a stage");
  ++indent_;
  std::string keyRow = "tsr_kt * " + n(f.tile) + " + tsr_r", inKeys = identifier(a.keys->h.var) + " < " + n(f.keys);
  flashFill(*a.k, a.keys->h.var, keyRow, a.depth->h.var, f.tile, f.depth, "tsr_ks + tsr_stage * " + n(f.tile * f.qs), f.qs,
            "threadIdx.x", warps * 32, inKeys);
  flashFill(*a.v, a.keys->h.var, keyRow, a.values->h.var, f.tile, f.width, "tsr_vs + tsr_stage * " + n(f.tile * f.vs), f.vs,
            "threadIdx.x", warps * 32, inKeys);
  --indent_;
  line("};");
  line("float tsr_o[" + m + "][" + n(f.width / 8) + "][4] = {}, tsr_m[" + m + "][2], tsr_l[" + m + "][2] = {};");
  line("#pragma unroll");
  line("for (int tsr_mt = 0; tsr_mt < " + m + "; ++tsr_mt) tsr_m[tsr_mt][0] = tsr_m[tsr_mt][1] = -INFINITY;");
  line("unsigned tsr_qf[" + m + "][" + n(f.depth / 16) + "][4];");
  // The first stages - 1 tiles in flight before the loop; in iteration kt, once tile kt has landed and every
  // warp is past iteration kt - 1 (one barrier), the copy of tile kt + stages - 1 goes into the stage kt - 1 used.
  for (int64_t stage = 0; stage + 1 < f.stages; ++stage) {
    line("if (" + n(stage) + " < " + n(tiles) + ") tsr_fill(" + n(stage) + ", " + n(stage) + ");");
    line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
  }
  line("for (int tsr_kt = 0; tsr_kt < " + n(tiles) + "; ++tsr_kt) {", prov);
  ++indent_;
  line("asm volatile(\"cp.async.wait_group " + n(f.stages - 2) + ";\\n\" ::: \"memory\");  // tile kt has landed");
  line("__syncthreads();");
  line("if (tsr_kt + " + n(f.stages - 1) + " < " + n(tiles) + ") tsr_fill(tsr_kt + " + n(f.stages - 1) + ", (tsr_kt + " +
       n(f.stages - 1) + ") % " + n(f.stages) + ");");
  line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
  line("if (tsr_kt == 0)");
  line("#pragma unroll");
  line("  for (int tsr_mt = 0; tsr_mt < " + m + "; ++tsr_mt)");
  line("#pragma unroll");
  line("    for (int tsr_kk = 0; tsr_kk < " + n(f.depth / 16) + "; ++tsr_kk)");
  line("      tsr_ldm4(tsr_qf[tsr_mt][tsr_kk], tsr_q + (tsr_mt * 16 + tsr_lane % 16) * " + n(f.qs) +
       " + tsr_kk * 16 + tsr_lane / 16 * 8, false);");
  line("const " + st + "* const tsr_k = tsr_ks + (tsr_kt % " + n(f.stages) + ") * " + n(f.tile * f.qs) + ";");
  line("const " + st + "* const tsr_v = tsr_vs + (tsr_kt % " + n(f.stages) + ") * " + n(f.tile * f.vs) + ";");
  flashScores(a, f, prov);
  flashChain(rows, a, f, prov);
  flashSoftmax(a, f, prov);
  flashValues(a, f, prov);
  --indent_;
  line("}");
  line("asm volatile(\"cp.async.wait_group 0;\\n\" ::: \"memory\");");
  line("#pragma unroll");
  line("for (int tsr_mt = 0; tsr_mt < " + m + "; ++tsr_mt)");
  line("#pragma unroll");
  line("  for (int tsr_h = 0; tsr_h < 2; ++tsr_h) {  // the row sums, from the quad's four partial sums");
  line("    tsr_l[tsr_mt][tsr_h] += __shfl_xor_sync(0xffffffffu, tsr_l[tsr_mt][tsr_h], 1);");
  line("    tsr_l[tsr_mt][tsr_h] += __shfl_xor_sync(0xffffffffu, tsr_l[tsr_mt][tsr_h], 2);");
  line("  }");
  flashOutput(rows, a, f);
  --indent_;
  line("}", prov);
  return true;
}

// S = Q · Kᵀ for the tile: 16 x tile for each of the warp's m-tiles, B's n-tiles in pairs from one
// ldmatrix.x4 of K's rows, used by every m-tile.
void Generator::flashScores(const AttentionNest& a, const FlashShape& f, const std::vector<std::string>& prov) {
  std::string m = n(f.mtiles);
  line("float tsr_s[" + m + "][" + n(f.tile / 8) + "][4] = {};", a.depth->provenance);
  line("#pragma unroll");
  line("for (int tsr_kk = 0; tsr_kk < " + n(f.depth / 16) + "; ++tsr_kk)", prov);
  ++indent_;
  flashTilePairs("tsr_np", f.tile / 16, "tsr_k + (tsr_np * 16 + tsr_lane % 8 + tsr_lane / 16 * 8) * " + n(f.qs) +
                     " + tsr_kk * 16 + (tsr_lane / 8) % 2 * 8", false, "tsr_s", "tsr_qf[tsr_mt][tsr_kk]", f.mtiles);
  --indent_;
}

// for each pair `loop` of n-tiles: one ldmatrix.x4 at `address` (its two 16 x 8 B fragments), then for each of
// the warp's m-tiles the two mma.sync accumulating into acc[mt][2 loop] and acc[mt][2 loop + 1] with A `a`.
void Generator::flashTilePairs(const std::string& loop, int64_t pairs, const std::string& address, bool trans,
                               const std::string& acc, const std::string& a, int64_t mtiles) {
  line("#pragma unroll");
  line("for (int " + loop + " = 0; " + loop + " < " + n(pairs) + "; ++" + loop + ") {");
  line("  unsigned tsr_b[4];");
  line("  tsr_ldm4(tsr_b, " + address + ", " + (trans ? "true" : "false") + ");");
  line("#pragma unroll");
  line("  for (int tsr_mt = 0; tsr_mt < " + n(mtiles) + "; ++tsr_mt) {");
  line("    tsr_mma(" + acc + "[tsr_mt][2 * " + loop + "], " + a + ", tsr_b[0], tsr_b[1]);");
  line("    tsr_mma(" + acc + "[tsr_mt][2 * " + loop + " + 1], " + a + ", tsr_b[2], tsr_b[3]);");
  line("  }");
  line("}");
}

// f(s) on each score as the graph computes it. A whole tile of keys on rows of the loop runs it unguarded; the
// last tile and the rows past the loop give -inf where a key or a row is outside, without reading there.
void Generator::flashChain(const ForStmt& rows, const AttentionNest& a, const FlashShape& f,
                           const std::vector<std::string>& prov) {
  std::map<std::string, std::string> locals = {{a.score, "tsr_sv"}};
  std::string j = identifier(a.keys->h.var), sv = "tsr_s[tsr_mt][tsr_nt][tsr_x]";
  auto chain = [&](const std::string& guard) {
    line(guard.empty() ? "{" : "if (" + guard + ") {");
    ++indent_;
    for (const Stmt& s : a.chain) stmt(withLocals(s, locals));
    line(sv + " = (float)(" + ep_.print(mapExpr(a.x, loadsAsLocals(locals))) + ");");
    --indent_;
    line("}");
  };
  line("bool tsr_whole = (tsr_kt + 1) * " + n(f.tile) + " <= " + n(f.keys) + ";");
  line("#pragma unroll");
  line("for (int tsr_mt = 0; tsr_mt < " + n(f.mtiles) + "; ++tsr_mt) tsr_whole = tsr_whole && tsr_rows[tsr_mt][0] && tsr_rows[tsr_mt][1];");
  openElements(f.mtiles, "tsr_nt", f.tile / 8, rows.h.var, a.keys->h.var, "tsr_kt * " + n(f.tile) + " + ", prov);
  line("const float tsr_sv = " + sv + ";");
  line("if (tsr_whole)");
  chain("");
  line("else {");
  ++indent_;
  line(sv + " = -INFINITY;");
  chain(j + " < " + n(f.keys) + " && tsr_rows[tsr_mt][tsr_x / 2]");
  --indent_;
  line("}");
  closeElements();
}

// The tile's row maxima (each lane holds rows g and g + 8 of each m-tile; a row's scores lie in the quad's four
// lanes), the rescale of what was summed under the old maxima, P = exp(S - m) as 2^(S·log2 e - m·log2 e) (one
// fma and one ex2 a score) and its partial row sums. While a row's scores are all -inf its maximum counts as 0,
// so its P is 0 and its alpha 1, not NaN.
void Generator::flashSoftmax(const AttentionNest& a, const FlashShape& f, const std::vector<std::string>& prov) {
  line("float tsr_alpha[" + n(f.mtiles) + "][2];", a.keys->provenance);
  line("#pragma unroll");
  line("for (int tsr_mt = 0; tsr_mt < " + n(f.mtiles) + "; ++tsr_mt)", prov);
  line("#pragma unroll");
  line("  for (int tsr_h = 0; tsr_h < 2; ++tsr_h) {");
  indent_ += 2;
  line("float (&tsr_sr)[" + n(f.tile / 8) + "][4] = tsr_s[tsr_mt];");
  line("float tsr_mx = tsr_m[tsr_mt][tsr_h];");
  line("#pragma unroll");
  line("for (int tsr_nt = 0; tsr_nt < " + n(f.tile / 8) + "; ++tsr_nt)");
  line("  tsr_mx = fmaxf(tsr_mx, fmaxf(tsr_sr[tsr_nt][2 * tsr_h], tsr_sr[tsr_nt][2 * tsr_h + 1]));");
  line("tsr_mx = fmaxf(tsr_mx, __shfl_xor_sync(0xffffffffu, tsr_mx, 1));");
  line("tsr_mx = fmaxf(tsr_mx, __shfl_xor_sync(0xffffffffu, tsr_mx, 2));");
  line("const float tsr_base = tsr_mx == -INFINITY ? 0.f : tsr_mx * 1.4426950408889634f;");
  line("tsr_alpha[tsr_mt][tsr_h] = tsr_ex2(tsr_m[tsr_mt][tsr_h] * 1.4426950408889634f - tsr_base);");
  line("tsr_m[tsr_mt][tsr_h] = tsr_mx;");
  line("float tsr_sum = 0.f;");
  line("#pragma unroll");
  line("for (int tsr_nt = 0; tsr_nt < " + n(f.tile / 8) + "; ++tsr_nt)");
  line("#pragma unroll");
  line("  for (int tsr_c = 0; tsr_c < 2; ++tsr_c) {");
  line("    float& tsr_p = tsr_sr[tsr_nt][2 * tsr_h + tsr_c];");
  line("    tsr_p = tsr_ex2(fmaf(tsr_p, 1.4426950408889634f, -tsr_base));");
  line("    tsr_sum += tsr_p;");
  line("  }");
  line("tsr_l[tsr_mt][tsr_h] = tsr_l[tsr_mt][tsr_h] * tsr_alpha[tsr_mt][tsr_h] + tsr_sum;");
  indent_ -= 2;
  line("  }");
}

// o = o · alpha + P · V: P's accumulators packed as A fragments, V's pairs of n-tiles by ldmatrix.trans, each
// used by every m-tile.
void Generator::flashValues(const AttentionNest& a, const FlashShape& f, const std::vector<std::string>& prov) {
  const std::vector<std::string>& vp = a.values->provenance;
  std::string m = n(f.mtiles);
  line("#pragma unroll", vp);
  line("for (int tsr_mt = 0; tsr_mt < " + m + "; ++tsr_mt)", vp);
  line("#pragma unroll");
  line("  for (int tsr_dt = 0; tsr_dt < " + n(f.width / 8) + "; ++tsr_dt)");
  line("#pragma unroll");
  line("    for (int tsr_x = 0; tsr_x < 4; ++tsr_x) tsr_o[tsr_mt][tsr_dt][tsr_x] *= tsr_alpha[tsr_mt][tsr_x / 2];");
  line("#pragma unroll", prov);
  line("for (int tsr_kk = 0; tsr_kk < " + n(f.tile / 16) + "; ++tsr_kk) {", vp);
  ++indent_;
  line("unsigned tsr_p[" + m + "][4];");
  line("#pragma unroll");
  line("for (int tsr_mt = 0; tsr_mt < " + m + "; ++tsr_mt) {");
  line("  const float (&tsr_lo)[4] = tsr_s[tsr_mt][2 * tsr_kk], (&tsr_hi)[4] = tsr_s[tsr_mt][2 * tsr_kk + 1];");
  line("  tsr_p[tsr_mt][0] = tsr_pk(tsr_lo[0], tsr_lo[1]);");
  line("  tsr_p[tsr_mt][1] = tsr_pk(tsr_lo[2], tsr_lo[3]);");
  line("  tsr_p[tsr_mt][2] = tsr_pk(tsr_hi[0], tsr_hi[1]);");
  line("  tsr_p[tsr_mt][3] = tsr_pk(tsr_hi[2], tsr_hi[3]);");
  line("}");
  flashTilePairs("tsr_dp", f.width / 16, "tsr_v + (tsr_kk * 16 + tsr_lane % 8 + (tsr_lane / 8) % 2 * 8) * " + n(f.vs) +
                     " + tsr_dp * 16 + tsr_lane / 16 * 8", true, "tsr_o", "tsr_p[tsr_mt]", f.mtiles);
  --indent_;
  line("}");
}

// y = o / l on each of the lane's outputs, then the group's epilogue and stores as the output loop writes them.
void Generator::flashOutput(const ForStmt& rows, const AttentionNest& a, const FlashShape& f) {
  std::map<std::string, std::string> locals = {{a.context, "tsr_ov"}, {a.sum, "tsr_lv"}};
  const std::vector<std::string>& prov = a.output->provenance;
  openElements(f.mtiles, "tsr_dt", f.width / 8, rows.h.var, a.output->h.var, "", prov);
  line("const float tsr_ov = tsr_o[tsr_mt][tsr_dt][tsr_x], tsr_lv = tsr_l[tsr_mt][tsr_x / 2];");
  line("if (tsr_rows[tsr_mt][tsr_x / 2]) {");
  ++indent_;
  Stmt body = unwrapBlocks(a.output->body);
  std::vector<Stmt> stmts = body->kind == StmtKind::Block ? static_cast<BlockStmt&>(*body).stmts : std::vector<Stmt>{body};
  for (const Stmt& s : stmts) stmt(withLocals(s, locals));
  --indent_;
  line("}");
  closeElements();
}

// Loops over the lane's elements of an accumulator of m-tiles x `tiles` tiles of 16 x 8 (its four elements of
// each: rows g and g + 8, columns 2t and 2t + 1), declaring the row loop's variable (the element's row of the
// warp's rows) and `columnVar` (`columnStart` plus the element's column); closeElements ends them.
void Generator::openElements(int64_t mtiles, const std::string& tile, int64_t tiles, const std::string& rowVar,
                             const std::string& columnVar, const std::string& columnStart,
                             const std::vector<std::string>& prov) {
  line("#pragma unroll", prov);
  line("for (int tsr_mt = 0; tsr_mt < " + n(mtiles) + "; ++tsr_mt)", prov);
  line("#pragma unroll");
  line("  for (int " + tile + " = 0; " + tile + " < " + n(tiles) + "; ++" + tile + ")");
  line("#pragma unroll");
  line("    for (int tsr_x = 0; tsr_x < 4; ++tsr_x) {");
  indent_ += 3;
  line("const long long " + identifier(rowVar) + " = tsr_mt * 16 + tsr_lane / 4 + tsr_x / 2 * 8;");
  line("const long long " + identifier(columnVar) + " = " + columnStart + tile + " * 8 + tsr_lane % 4 * 2 + tsr_x % 2;");
}

void Generator::closeElements() {
  indent_ -= 3;
  line("    }");
}

}  // namespace tessera::codegen::detail
