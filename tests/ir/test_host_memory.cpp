// Tensor bytes (ir/host_memory.h): large buffers mapped on huge-page boundaries come zeroed when asked, are
// writable end to end and are given back when the last tensor sharing them goes; small ones come from the heap.
#include <QtTest>

#include <cstdint>
#include <unistd.h>

#include <QFile>

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

  // The mapping ends at the last page the data needs, so the kernel backs its tail with small pages: a 3 MiB
  // tensor is not rounded up to two huge pages.
  void theMappingEndsWithTheData() {
    const size_t bytes = (size_t(3) << 20) + 5;
    if (!mapsHostBytes(bytes)) QSKIP("large buffers come from the heap here (not Linux, or AddressSanitizer)");
    std::shared_ptr<std::byte> b = allocateHostBytes(bytes, false);
    const uintptr_t at = reinterpret_cast<uintptr_t>(b.get()), page = uintptr_t(sysconf(_SC_PAGESIZE));
    QFile maps("/proc/self/maps");
    QVERIFY(maps.open(QIODevice::ReadOnly));
    bool found = false;
    for (const QByteArray& line : maps.readAll().split('\n')) {
      const QList<QByteArray> range = line.split(' ').value(0).split('-');
      if (range.size() != 2 || range[0].toULongLong(nullptr, 16) != at) continue;
      found = true;
      QCOMPARE(uintptr_t(range[1].toULongLong(nullptr, 16)), at + (bytes + page - 1) / page * page);
    }
    QVERIFY2(found, "no mapping starts at the data");
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
