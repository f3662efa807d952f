#include "kernel/shared_banks.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace tessera::kernel {
namespace {

constexpr int64_t kBanks = 32, kBankBytes = 4;

// The pixel row and depth (channel) of half `half` of register `reg` of lane `lane`'s A fragment (PTX ISA:
// m16n8k8 .tf32, register i at row g + 8 (i & 1), depth t + 4 (i >> 1); m16n8k16, two halves at row
// g + 8 (i & 1), depth 2t + half + 8 (i >> 1); g = lane / 4, t = lane % 4).
std::pair<int64_t, int64_t> fragmentElement(int64_t elementBytes, int lane, int reg, int half) {
  if (elementBytes == 4) {
    const FragmentPlace at = tf32FragmentPlace(true, lane, reg);
    return {at.outer, at.depth};
  }
  return {lane / 4 + 8 * (reg & 1), 2 * (lane % 4) + half + 8 * (reg >> 1)};
}

}  // namespace

FragmentPlace tf32FragmentPlace(bool operandA, int64_t lane, int reg) {
  const int64_t g = lane / 4, t = lane % 4;
  if (operandA) return {g + 8 * (reg & 1), t + 4 * (reg >> 1)};
  return {g, t + 4 * reg};
}

int64_t sharedWavefronts(const std::vector<int64_t>& byteAddresses) {
  std::map<int64_t, std::set<int64_t>> wordsOfBank;
  for (int64_t address : byteAddresses) {
    const int64_t word = address / kBankBytes;
    wordsOfBank[word % kBanks].insert(word);
  }
  size_t most = 1;
  for (const auto& [bank, words] : wordsOfBank) most = std::max(most, words.size());
  return int64_t(most);
}

double tf32FragmentWavefronts(bool operandA, const std::function<int64_t(const FragmentPlace&)>& byteAddressOf) {
  const int registers = operandA ? 4 : 2;
  int64_t wavefronts = 0;
  for (int reg = 0; reg < registers; ++reg) {
    std::vector<int64_t> addresses;
    for (int lane = 0; lane < 32; ++lane) addresses.push_back(byteAddressOf(tf32FragmentPlace(operandA, lane, reg)));
    wavefronts += sharedWavefronts(addresses);
  }
  return double(wavefronts) / registers;
}

double tf32OperandWavefronts(bool operandA, bool depthAlongRow, int64_t rowElems) {
  return tf32FragmentWavefronts(operandA, [&](const FragmentPlace& at) {
    return 4 * (depthAlongRow ? at.outer * rowElems + at.depth : at.depth * rowElems + at.outer);
  });
}

double haloFragmentWavefronts(const HaloReads& h, int64_t pad, int64_t padRows) {
  const int64_t phaseLength = (h.cols + h.phases - 1) / h.phases;
  const int64_t rowElems = phaseLength * h.phases + pad, planeElems = (h.rows + padRows) * rowElems;
  const int64_t pixels = h.tileH * h.tileW, tiles = (pixels + 15) / 16;
  const int halves = h.elementBytes == 4 ? 1 : 2;
  int64_t wavefronts = 0, loads = 0;
  for (int64_t i = 0; i < h.kh; ++i)
    for (int64_t j = 0; j < h.kw; ++j)
      for (int64_t tile = 0; tile < tiles; ++tile)
        for (int reg = 0; reg < 4; ++reg)
          for (int half = 0; half < halves; ++half) {
            std::vector<int64_t> addresses;
            for (int lane = 0; lane < 32; ++lane) {
              auto [row, depth] = fragmentElement(h.elementBytes, lane, reg, half);
              const int64_t p = 16 * tile + row;
              if (p >= pixels) continue;
              const int64_t y = p / h.tileW * h.strideH + i * h.dilationH, x = p % h.tileW * h.strideW + j * h.dilationW;
              const int64_t stored = x % h.phases * phaseLength + x / h.phases;
              addresses.push_back((depth * planeElems + y * rowElems + stored) * h.elementBytes);
            }
            if (addresses.empty()) continue;
            wavefronts += sharedWavefronts(addresses);
            ++loads;
          }
  return loads ? double(wavefronts) / double(loads) : 1.0;
}

}  // namespace tessera::kernel
