//===- WorkerPoolTest.cpp - The CPU backend's workers ---------------------===//
//
// The pool runs every task of a region once, on at most the threads allowed;
// nested regions run inline, concurrent callers each finish theirs, a forked
// child gets a pool of its own; GEMMs and convolutions split among workers
// give the bits they give whole.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace recast::runtime;

namespace {

/// Sets the workers for one test and restores the default after it.
class WorkerPoolTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(recast_device_create(RECAST_DEVICE_CPU, 0, &device), RECAST_OK)
        << recast_last_error();
  }
  void TearDown() override {
    setCpuWorkers(0);
    EXPECT_EQ(recast_device_destroy(device), 0);
  }
  recast_device_t device = nullptr;
};

TEST_F(WorkerPoolTest, EveryTaskRunsOnceOnTheRegionsThreads) {
  setCpuWorkers(3);
  std::set<std::thread::id> threads;
  for (int region = 0; region < 500; ++region) {
    std::mutex mutex;
    std::vector<int64_t> ran;
    parallelFor(7, [&](int64_t task, unsigned slot) {
      EXPECT_LT(slot, 3u);
      // Some work, so that the pool's threads take tasks too.
      volatile double sink = 0;
      for (int i = 0; i < 2000; ++i)
        sink = sink + i;
      std::lock_guard<std::mutex> lock(mutex);
      ran.push_back(task);
      threads.insert(std::this_thread::get_id());
    });
    std::sort(ran.begin(), ran.end());
    ASSERT_EQ(ran, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  }
  EXPECT_GT(threads.size(), 1u);
  EXPECT_LE(threads.size(), 3u);
}

// The caller takes tasks from the front and the pool's thread from the
// back, so that regions over the same rows give each thread the same end.
TEST_F(WorkerPoolTest, CallerTakesTheFrontAndThePoolTheBack) {
  setCpuWorkers(2);
  bool poolRan = false;
  for (int region = 0; region < 200; ++region) {
    std::vector<unsigned> slotOf(16, ~0u);
    parallelFor(16, [&](int64_t task, unsigned slot) {
      volatile double sink = 0;
      for (int i = 0; i < 2000; ++i)
        sink = sink + i;
      slotOf[task] = slot;
    });
    // Slot 0 ran a prefix of the tasks, slot 1 the rest.
    auto firstOfPool = std::find(slotOf.begin(), slotOf.end(), 1u);
    ASSERT_TRUE(std::all_of(slotOf.begin(), firstOfPool,
                            [](unsigned slot) { return slot == 0; }));
    ASSERT_TRUE(std::all_of(firstOfPool, slotOf.end(),
                            [](unsigned slot) { return slot == 1; }));
    poolRan |= firstOfPool != slotOf.end();
  }
  EXPECT_TRUE(poolRan);
}

TEST_F(WorkerPoolTest, ThreadsAreCapped) {
  setCpuWorkers(4);
  for (int region = 0; region < 200; ++region)
    parallelFor(
        16, [&](int64_t, unsigned slot) { ASSERT_LT(slot, 2u); }, 2);
  std::atomic<int64_t> calls{0};
  parallelFor(0, [&](int64_t, unsigned) { ++calls; });
  EXPECT_EQ(calls.load(), 0);
  setCpuWorkers(1);
  std::thread::id caller = std::this_thread::get_id();
  parallelFor(5, [&](int64_t, unsigned slot) {
    EXPECT_EQ(slot, 0u);
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++calls;
  });
  EXPECT_EQ(calls.load(), 5);
}

TEST_F(WorkerPoolTest, SettingThreadsReturnsTheSettingItReplaces) {
  // What a step compiled for its own thread count puts back after its call.
  EXPECT_EQ(recast_set_cpu_threads(3), 0);
  EXPECT_EQ(cpuWorkers(), 3u);
  EXPECT_EQ(recast_set_cpu_threads(2), 3);
  EXPECT_EQ(recast_set_cpu_threads(3), 2);
  EXPECT_EQ(recast_set_cpu_threads(0), 3);
  EXPECT_EQ(cpuWorkers(), unsigned(std::max(1, recast_cpu_threads())));
}

TEST_F(WorkerPoolTest, NestedRegionsRunOnTheirThread) {
  setCpuWorkers(2);
  std::atomic<unsigned> inner{0};
  parallelFor(4, [&](int64_t, unsigned) {
    std::thread::id outer = std::this_thread::get_id();
    parallelFor(3, [&](int64_t, unsigned slot) {
      EXPECT_EQ(std::this_thread::get_id(), outer);
      EXPECT_EQ(slot, 0u);
      ++inner;
    });
  });
  EXPECT_EQ(inner.load(), 12u);
}

TEST_F(WorkerPoolTest, ConcurrentCallersEachFinishTheirRegions) {
  setCpuWorkers(2);
  std::atomic<int64_t> total{0};
  auto caller = [&] {
    for (int region = 0; region < 2000; ++region)
      parallelFor(3, [&](int64_t task, unsigned) { total += task + 1; });
  };
  std::thread first(caller), second(caller);
  first.join();
  second.join();
  EXPECT_EQ(total.load(), 2 * 2000 * 6);
}

TEST_F(WorkerPoolTest, ManyShortRegionsInARow) {
  setCpuWorkers(2);
  std::atomic<int64_t> counts[2] = {0, 0};
  for (int region = 0; region < 100000; ++region)
    parallelFor(2, [&](int64_t task, unsigned) { ++counts[task]; });
  EXPECT_EQ(counts[0].load(), 100000);
  EXPECT_EQ(counts[1].load(), 100000);
}

TEST_F(WorkerPoolTest, SleepingThreadsAreWokenAndWake) {
  setCpuWorkers(2);
  for (int region = 0; region < 20; ++region) {
    // Longer than the threads spin: the pool's thread is asleep when the
    // region starts, and the caller falls asleep waiting for the pool's task.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::atomic<bool> poolStarted{false};
    std::atomic<unsigned> slotsSeen{0};
    parallelFor(2, [&](int64_t task, unsigned slot) {
      slotsSeen |= 1u << slot;
      if (slot == 0) {
        // Waits (boundedly: a lost wake-up fails here instead of hanging)
        // for the pool's thread, so that it takes the other task.
        auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!poolStarted && std::chrono::steady_clock::now() < deadline)
          std::this_thread::yield();
        return;
      }
      poolStarted = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    ASSERT_EQ(slotsSeen.load(), 3u) << "region " << region;
  }
}

TEST_F(WorkerPoolTest, AForkedChildHasAPoolOfItsOwn) {
  setCpuWorkers(2);
  parallelFor(2, [](int64_t, unsigned) {});
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The parent's threads do not exist here: waiting on them would hang.
    alarm(20);
    std::atomic<unsigned> calls{0};
    for (int region = 0; region < 100; ++region)
      parallelFor(2, [&](int64_t, unsigned) { ++calls; });
    _exit(calls.load() == 200 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

std::vector<uint8_t> randomBytes(size_t elements, int32_t dtype,
                                 unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint8_t> bytes(elements * recast_dtype_size(dtype));
  for (size_t i = 0; i < elements; ++i)
    storeElement(dtype, bytes.data(), int64_t(i), dist(rng));
  return bytes;
}

/// D of `desc` (C random, accumulated into) computed by `workers` workers.
std::vector<uint8_t> gemmWith(recast_device_t device, recast_gemm_desc desc,
                              unsigned workers) {
  setCpuWorkers(workers);
  std::vector<uint8_t> a =
      randomBytes(size_t(desc.batch * desc.m * desc.k), desc.type_a, 1);
  std::vector<uint8_t> b =
      randomBytes(size_t(desc.batch * desc.k * desc.n), desc.type_b, 2);
  std::vector<uint8_t> c =
      randomBytes(size_t(desc.batch * desc.m * desc.n), desc.type_c, 3);
  desc.a = a.data();
  desc.b = b.data();
  desc.c = desc.d = c.data();
  EXPECT_EQ(recast_gemm_ex(device, &desc), RECAST_OK) << recast_last_error();
  return c;
}

TEST_F(WorkerPoolTest, SplitGemmsGiveTheBitsOfTheWholeProduct) {
  struct Shape {
    int64_t batch, m, n, k;
  };
  // Rows split (m >= n), columns split, a batch shared out, a product too
  // small to split, and sizes that are not multiples of the blocks.
  for (Shape shape :
       {Shape{1, 301, 70, 500}, Shape{1, 37, 700, 300}, Shape{3, 150, 130, 90},
        Shape{2, 9, 7, 5}, Shape{1, 1000, 17, 64}})
    for (int32_t type : {RECAST_F32, RECAST_BF16, RECAST_F16})
      for (int transA : {0, 1})
        for (int transB : {0, 1}) {
          SCOPED_TRACE(std::to_string(shape.m) + "x" + std::to_string(shape.n) +
                       "x" + std::to_string(shape.k) + " type " +
                       std::to_string(type) + " trans " +
                       std::to_string(transA) + std::to_string(transB));
          recast_gemm_desc desc = {};
          desc.type_a = desc.type_b = type;
          desc.type_c = type == RECAST_F16 ? RECAST_F16 : RECAST_F32;
          desc.trans_a = transA;
          desc.trans_b = transB;
          desc.batch = shape.batch;
          desc.m = shape.m;
          desc.n = shape.n;
          desc.k = shape.k;
          desc.alpha = 0.5f;
          desc.beta = 1.0f;
          std::vector<uint8_t> whole = gemmWith(device, desc, 1);
          for (unsigned workers : {2u, 3u, 4u})
            ASSERT_TRUE(whole == gemmWith(device, desc, workers))
                << workers << " workers";
        }
}

/// The output of `desc` (a random one accumulated into) computed by
/// `workers` workers.
std::vector<uint8_t> convWith(recast_device_t device, recast_conv2d_desc desc,
                              unsigned workers) {
  setCpuWorkers(workers);
  bool forward = desc.kind == RECAST_CONV2D_FORWARD;
  size_t image = size_t(desc.n * desc.h * desc.w * desc.c);
  size_t filter = size_t(desc.kh * desc.kw * desc.c * desc.f);
  size_t grid = size_t(desc.n * desc.oh * desc.ow * desc.f);
  std::vector<uint8_t> x = randomBytes(image, desc.type_x, 1);
  std::vector<uint8_t> b = randomBytes(forward ? filter : grid, desc.type_x, 2);
  std::vector<uint8_t> out =
      randomBytes(forward ? grid : filter, desc.type_out, 3);
  desc.x = x.data();
  desc.b = b.data();
  desc.out = out.data();
  EXPECT_EQ(recast_conv2d_ex(device, &desc), RECAST_OK) << recast_last_error();
  return out;
}

TEST_F(WorkerPoolTest, SplitConvolutionsGiveTheBitsOfTheWholeOne) {
  for (int32_t kind : {RECAST_CONV2D_FORWARD, RECAST_CONV2D_FILTER_GRADIENT})
    for (int32_t layout : {RECAST_CONV2D_NHWC, RECAST_CONV2D_NCHW})
      for (int32_t type : {RECAST_F32, RECAST_BF16}) {
        SCOPED_TRACE(std::to_string(kind) + " " + std::to_string(layout) + " " +
                     std::to_string(type));
        // 3 x 3 at stride 1 over images big enough to gather in parallel
        // and several to a block (NCHW); a strided one; a 1 x 1 shortcut;
        // 256 output pixels, a block for each worker (NHWC).
        recast_conv2d_desc cases[] = {
            {kind, layout, type, RECAST_F32, 4,       10,      10,
             32,   3,      3,    32,         8,       8,       1,
             1,    1,      1,    nullptr,    nullptr, nullptr, 0},
            {kind, layout, type, RECAST_F32, 6,       34,      34,
             16,   3,      3,    24,         32,      32,      1,
             1,    1,      1,    nullptr,    nullptr, nullptr, 0},
            {kind, layout, type, RECAST_F32, 8,       10,      10,
             32,   3,      3,    64,         4,       4,       2,
             2,    1,      1,    nullptr,    nullptr, nullptr, 0},
            {kind, layout, type, RECAST_F32, 5,       9,       9,
             8,    1,      1,    16,         9,       9,       1,
             1,    1,      1,    nullptr,    nullptr, nullptr, 1},
        };
        for (const recast_conv2d_desc &desc : cases) {
          std::vector<uint8_t> whole = convWith(device, desc, 1);
          for (unsigned workers : {2u, 3u})
            ASSERT_TRUE(whole == convWith(device, desc, workers))
                << workers << " workers, " << desc.n << " images of " << desc.h
                << " x " << desc.w;
        }
      }
}

} // namespace
