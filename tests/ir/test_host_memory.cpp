// Tensor bytes (ir/host_memory.h): large buffers mapped on huge-page boundaries come zeroed when asked, are
// writable end to end and are given back when the last tensor sharing them goes; small ones come from the heap.
#include <QtTest>

#include <cstdint>

#include "ir/host_memory.h"
#include "ir/tensor.h"

using namespace tessera;

class TestHostMemory : public QObject {
  Q_OBJECT
 private slots:
  void largeBuffersAreZeroedAndWritable() {
    for (size_t bytes : {size_t(2) << 20, (size_t(5) << 20) + 3, size_t(64) << 20}) {
      std::shared_ptr<std::byte> b = allocateHostBytes(bytes, true);
      QVERIFY(b);
      bool zero = true;
      for (size_t i = 0; i < bytes; i += 4093) zero = zero && b.get()[i] == std::byte{0};
      QVERIFY(zero && b.get()[bytes - 1] == std::byte{0});
      b.get()[0] = std::byte{1};
      b.get()[bytes - 1] = std::byte{2};  // the last byte is the caller's
      QCOMPARE(b.get()[bytes - 1], std::byte{2});
      // On a huge page boundary, so that the kernel can back it with huge pages.
      if (mapsHostBytes(bytes)) QCOMPARE(reinterpret_cast<uintptr_t>(b.get()) % kHugePageBytes, uintptr_t(0));
    }
  }

  void smallBuffersComeFromTheHeap() {
    std::shared_ptr<std::byte> b = allocateHostBytes(100, true);
    for (int i = 0; i < 100; ++i) QCOMPARE(b.get()[i], std::byte{0});
    QVERIFY(!mapsHostBytes(kHugePageBytes - 1));
  }

  // A tensor's bytes outlive the tensor while a reshaped copy shares them, whatever their size.
  void sharedBytesLiveAsLongAsTheirLastTensor() {
    Tensor reshaped;
    {
      Tensor t(DType::F32, {1024, 1024});  // 4 MiB: mapped
      t.mutableData<float>()[1024 * 1024 - 1] = 7.0f;
      reshaped = t.reshaped({1 << 20});
    }
    QCOMPARE(reshaped.data<float>()[(1 << 20) - 1], 7.0f);
    QCOMPARE(reshaped.data<float>()[0], 0.0f);
  }
};

QTEST_MAIN(TestHostMemory)
#include "test_host_memory.moc"
