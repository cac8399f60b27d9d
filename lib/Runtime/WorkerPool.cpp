//===- WorkerPool.cpp - The CPU backend's threads -------------------------===//
//
// One pool of threads for the runtime's own parallel work: GEMMs split into
// blocks of rows (OpenBLAS itself runs on one thread), convolution blocks and
// gathers, the bf16 kernels' tasks, and the blocks of the compiled kernels
// split across threads (recast_parallel_for). A region hands out its tasks
// one at a time to whichever of the caller and the pool's threads asks
// first (the caller from the front, the others from the back), and returns
// when all have run.
//
// Steps call the runtime hundreds of times between compiled loops of a few
// microseconds each, and waking a sleeping thread takes tens of microseconds
// on a virtual machine. So the caller never waits for a thread to wake: it
// takes tasks itself from the start, and a thread that comes late finds
// them taken. A thread spins for a short while after a region before it
// sleeps on a condition variable, so that the next region usually finds it
// awake; the spin is bounded so that an idle pool leaves the cores to the
// rest of the process.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <pthread.h>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

using namespace recast::runtime;

namespace {

/// How long a thread spins for a region (a pool thread) or for the last
/// tasks of its region (the caller) before it sleeps.
constexpr std::chrono::microseconds kSpin(100);

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// Spins until `ready()` or kSpin has passed; returns whether it is ready.
template <typename Ready> bool spinUntil(Ready ready) {
  auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    if (ready())
      return true;
    pause();
    // The clock is read every 64 tries: a read costs more than a pause.
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline)
      return ready();
  }
}

/// Whether the calling thread is running a task: a region started there runs
/// its tasks on that thread.
thread_local bool insideRegion = false;

/// The state of the latest region in one word, so that a thread reads a
/// consistent view and claims a task with one compare-and-swap: a late
/// thread's claim fails once a newer region has replaced its own. The tasks
/// not yet taken are [front, back): the caller takes them from the front,
/// the pool's threads from the back. Consecutive regions over the same rows
/// (a GEMM's output, then the kernels that read it) then give each thread
/// mostly the rows it wrote before, still in its core's cache, where a
/// shared counter hands the blocks out in whatever order the threads come.
struct Claim {
  static constexpr unsigned kTaskBits = 18, kSlotBits = 8;
  static constexpr int64_t kMaxTasks = (int64_t(1) << kTaskBits) - 1;
  static constexpr unsigned kMaxSlots = (1u << kSlotBits) - 1;

  uint64_t generation; // wraps; compared for equality only
  unsigned slots;      // threads that may take part (the caller is slot 0)
  int64_t front, back;

  static Claim unpack(uint64_t word) {
    return {word >> (2 * kTaskBits + kSlotBits),
            unsigned(word >> (2 * kTaskBits)) & kMaxSlots,
            int64_t(word >> kTaskBits) & kMaxTasks, int64_t(word) & kMaxTasks};
  }
  uint64_t pack() const {
    return generation << (2 * kTaskBits + kSlotBits) |
           uint64_t(slots) << (2 * kTaskBits) | uint64_t(front) << kTaskBits |
           uint64_t(back);
  }
};

/// A condition variable that a thread rings after storing (seq_cst) what
/// the waiters' `ready` reads (seq_cst): regions start and end hundreds of
/// times a step while the threads that wait for them mostly spin, so
/// ringing takes no lock while none sleeps. A waiter counts itself before
/// it reads `ready`, and a ringer stores before it reads the count, so
/// either the waiter sees what was stored or the ringer sees the waiter
/// (and locks the mutex it waits under before notifying).
class Doorbell {
public:
  template <typename Ready> void wait(Ready ready) {
    std::unique_lock<std::mutex> lock(mutex);
    waiters.fetch_add(1, std::memory_order_seq_cst);
    condition.wait(lock, ready);
    waiters.fetch_sub(1, std::memory_order_relaxed);
  }

  void ring() {
    if (waiters.load(std::memory_order_seq_cst) == 0)
      return;
    { std::lock_guard<std::mutex> lock(mutex); }
    condition.notify_all();
  }

private:
  std::mutex mutex;
  std::condition_variable condition;
  std::atomic<unsigned> waiters{0};
};

class WorkerPool {
public:
  /// A pool with `helpers` threads besides the caller's.
  explicit WorkerPool(unsigned helpers) : helpers(helpers) {
    for (unsigned slot = 1; slot <= helpers; ++slot)
      std::thread([this, slot] { serve(slot); }).detach();
  }

  unsigned capacity() const { return helpers + 1; }

  /// Runs the region on the pool with at most `slots` threads; false when
  /// another thread holds the pool.
  bool tryRun(int64_t tasks, unsigned slots, const ParallelTask &fn) {
    std::unique_lock<std::mutex> region(regionMutex, std::try_to_lock);
    if (!region.owns_lock())
      return false;
    job.store(&fn, std::memory_order_relaxed);
    jobTasks.store(tasks, std::memory_order_relaxed);
    completed.store(0, std::memory_order_relaxed);
    uint64_t generation = ++generations & ((uint64_t(1) << 20) - 1);
    state.store(Claim{generation, slots, 0, tasks}.pack(),
                std::memory_order_seq_cst);
    wake.ring();
    work(generation, 0);
    auto finished = [&] {
      return completed.load(std::memory_order_seq_cst) == tasks;
    };
    if (!spinUntil(finished))
      done.wait(finished);
    return true;
  }

private:
  /// Runs tasks of region `generation` as slot `slot` until none is left.
  void work(uint64_t generation, unsigned slot) {
    for (;;) {
      uint64_t word = state.load(std::memory_order_acquire);
      Claim claim = Claim::unpack(word);
      if (claim.generation != generation || slot >= claim.slots ||
          claim.front >= claim.back)
        return;
      int64_t task = slot == 0 ? claim.front++ : --claim.back;
      if (!state.compare_exchange_weak(word, claim.pack(),
                                       std::memory_order_acq_rel))
        continue;
      // The region cannot end before this task has run: its function and
      // task count are still the ones published with it.
      int64_t tasks = jobTasks.load(std::memory_order_relaxed);
      insideRegion = true;
      (*job.load(std::memory_order_relaxed))(task, slot);
      insideRegion = false;
      if (completed.fetch_add(1, std::memory_order_seq_cst) + 1 == tasks)
        done.ring();
    }
  }

  /// Pool thread `slot`'s loop.
  [[noreturn]] void serve(unsigned slot) {
    // The generation the pool was made with: a region may start before this
    // thread does.
    uint64_t seen = 0;
    for (;;) {
      uint64_t current = seen;
      auto started = [&] {
        current =
            Claim::unpack(state.load(std::memory_order_seq_cst)).generation;
        return current != seen;
      };
      if (!spinUntil(started))
        wake.wait(started);
      seen = current;
      work(seen, slot);
    }
  }

  const unsigned helpers;
  /// Held by the thread running a region.
  std::mutex regionMutex;
  uint64_t generations = 0;
  /// The latest region's Claim.
  std::atomic<uint64_t> state{0};
  std::atomic<const ParallelTask *> job{nullptr};
  std::atomic<int64_t> jobTasks{0};
  /// Wakes the pool's sleeping threads for a new region.
  Doorbell wake;
  /// Tasks of the current region that have run.
  std::atomic<int64_t> completed{0};
  /// Wakes a caller that sleeps until its region's last task has run.
  Doorbell done;
};

/// What setCpuWorkers chose; 0 for recast_cpu_threads().
std::atomic<unsigned> workerLimit{0};

/// The process's pool, made on first use with threads for the largest
/// region allowed. It is never destroyed: its threads sleep when idle and
/// end with the process (joining them in a static destructor could run
/// after the runtime's other statics are gone). A child made by fork() has
/// none of its parent's threads and makes a pool of its own.
std::atomic<WorkerPool *> currentPool{nullptr};

WorkerPool *getPool(unsigned slots) {
  // Every region asks: the pool it finds is the one to use unless it is too
  // small, so only the first region (and a larger one) takes the lock.
  WorkerPool *pool = currentPool.load(std::memory_order_acquire);
  if (pool && pool->capacity() >= slots)
    return pool;
  static std::mutex poolMutex;
  std::lock_guard<std::mutex> lock(poolMutex);
  static bool forkHandled = [] {
    pthread_atfork(nullptr, nullptr, [] {
      currentPool.store(nullptr, std::memory_order_relaxed);
    });
    return true;
  }();
  (void)forkHandled;
  pool = currentPool.load(std::memory_order_relaxed);
  if (!pool || pool->capacity() < slots) {
    pool = new WorkerPool(slots - 1);
    currentPool.store(pool, std::memory_order_release);
  }
  return pool;
}

} // namespace

unsigned recast::runtime::cpuWorkers() {
  unsigned limit = workerLimit.load(std::memory_order_relaxed);
  if (!limit)
    limit = unsigned(std::max(1, recast_cpu_threads()));
  return std::min(limit, Claim::kMaxSlots);
}

unsigned recast::runtime::setCpuWorkers(unsigned workers) {
  return workerLimit.exchange(workers, std::memory_order_relaxed);
}

void recast::runtime::parallelFor(int64_t tasks, const ParallelTask &fn,
                                  unsigned maxThreads) {
  if (tasks <= 0)
    return;
  unsigned slots = unsigned(std::min<int64_t>(tasks, cpuWorkers()));
  if (maxThreads)
    slots = std::min(slots, maxThreads);
  if (slots > 1 && tasks <= Claim::kMaxTasks && !insideRegion &&
      getPool(slots)->tryRun(tasks, slots, fn))
    return;
  for (int64_t task = 0; task < tasks; ++task)
    fn(task, 0);
}

extern "C" int recast_set_cpu_threads(int threads) {
  return int(setCpuWorkers(unsigned(std::max(0, threads))));
}

extern "C" void recast_parallel_for(void (*block)(void *context, int64_t index),
                                    void *context, int64_t blocks) {
  parallelFor(blocks, [&](int64_t index, unsigned) { block(context, index); });
}
