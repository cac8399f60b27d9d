//===- RuntimeInternal.h - Shared parts of recast's runtime backends ------===//
//
// The device object and the backend interface behind recast_runtime.h. Each
// backend (CPU, CUDA) implements Backend; the C entry points check their
// arguments, keep the bookkeeping (memory, arena, errors) and dispatch.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_LIB_RUNTIME_RUNTIMEINTERNAL_H
#define RECAST_LIB_RUNTIME_RUNTIMEINTERNAL_H

#include "recast/Runtime/recast_runtime.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace recast::runtime {

/// Records `message` as the calling thread's last error and returns `status`.
recast_status fail(recast_status status, std::string message);

/// Keeps the first failure of code called from compiled steps for
/// recast_take_deferred_error (the message is the thread's last error).
void deferError(recast_status status);

/// "1.50 GiB (1610612736 bytes)".
std::string formatBytes(uint64_t bytes);

/// Rows of a GEMM's result that the CPU backend hands to a worker are
/// multiples of this (of every OpenBLAS sgemm kernel's tile height in
/// row-major terms: 4, 8, 12, 24), so that a product split by rows gives the
/// bits it gives whole.
constexpr int64_t kSplitRows = 24;

/// Threads the CPU backend's own parallel work uses: recast_cpu_threads(),
/// unless setCpuWorkers chose otherwise.
unsigned cpuWorkers();
/// Sets cpuWorkers() (0: recast_cpu_threads() again) and returns the
/// setting it replaces. For tests that run the same work split and whole.
unsigned setCpuWorkers(unsigned workers);

/// Tasks a region of the CPU backend is cut into for each worker, when its
/// work allows: a worker that starts late (a pool thread waking, or its
/// core lent elsewhere for a while) leaves its share to the others instead
/// of holding the region for a whole share. recast-kernel-loops'
/// blocks-per-thread default matches it.
constexpr unsigned kTasksPerWorker = 4;

/// Fewest rows of a GEMM's result in one task when there are more tasks
/// than workers: each task packs the whole of op(B) again, which for a
/// block of 24 rows costs about as much as its multiply-adds.
constexpr int64_t kMinTaskRows = 4 * kSplitRows;

/// Tasks to cut a region of the CPU backend into at most: kTasksPerWorker
/// for each of cpuWorkers(), or 1 on one worker (where a cut only costs).
inline int64_t maxCpuTasks() {
  unsigned workers = cpuWorkers();
  return workers > 1 ? int64_t(workers) * kTasksPerWorker : 1;
}

/// One task of a parallelFor: its index, and the slot of the thread running
/// it (below the region's threads, at most cpuWorkers(); one thread runs
/// one task at a time, so per-slot scratch needs no lock). A reference to
/// the caller's callable, as llvm::function_ref is: parallelFor returns
/// once every task has run, and a step starts hundreds of regions, whose
/// lambdas a std::function would copy to the heap (on the thread that makes
/// the region, often one of the pool's, to be freed by another).
class ParallelTask {
public:
  template <typename Fn, typename = std::enable_if_t<
                             !std::is_same_v<std::decay_t<Fn>, ParallelTask>>>
  ParallelTask(Fn &&fn)
      : callable(const_cast<void *>(static_cast<const void *>(&fn))),
        invoke([](void *callable, int64_t task, unsigned slot) {
          (*static_cast<std::remove_reference_t<Fn> *>(callable))(task, slot);
        }) {}

  void operator()(int64_t task, unsigned slot) const {
    invoke(callable, task, slot);
  }

private:
  void *callable;
  void (*invoke)(void *callable, int64_t task, unsigned slot);
};

/// Runs fn for each task in [0, tasks) on the calling thread and the
/// runtime's pool (WorkerPool.cpp), at most min(tasks, cpuWorkers(),
/// maxThreads) threads at a time (0: no third bound), and returns when all
/// have run. Tasks go to whichever
/// thread asks first: each must not wait on another. Called from inside a
/// task, or while another thread runs a region, it runs the tasks in order
/// on the calling thread (slot 0).
void parallelFor(int64_t tasks, const ParallelTask &fn,
                 unsigned maxThreads = 0);

/// Whether the CPU runs AVX512_BF16 (vdpbf16ps).
bool hasAvx512Bf16();

/// cblas_sbgemm for row-major operands (`order` is ignored): C = alpha op(A)
/// op(B) + beta C, bf16 A and B, f32 C and accumulation, on AVX512_BF16
/// (Bf16Gemm.cpp). Only to be called where hasAvx512Bf16().
void avx512Sbgemm(int order, int transA, int transB, int m, int n, int k,
                  float alpha, const uint16_t *a, int lda, const uint16_t *b,
                  int ldb, float beta, float *c, int ldc);

/// Whether the CPU runs AMX-BF16 (tdpbf16ps) and the kernel lets the
/// process use the tiles (requested on the first call).
bool hasAmxBf16();

/// avx512Sbgemm on AMX tiles (Bf16Gemm.cpp). Only to be called where
/// hasAmxBf16().
void amxSbgemm(int order, int transA, int transB, int m, int n, int k,
               float alpha, const uint16_t *a, int lda, const uint16_t *b,
               int ldb, float beta, float *c, int ldc);

class Backend {
public:
  virtual ~Backend();
  virtual const char *name() const = 0;
  /// Raw device memory; `what` names the use in out-of-memory messages.
  virtual recast_status allocate(size_t bytes, void **out) = 0;
  virtual recast_status release(void *ptr) = 0;
  /// Bytes held from the device's allocator, the blocks kept for reuse
  /// included; -1 when the backend keeps none (the live bytes then).
  virtual int64_t reservedBytes() const { return -1; }
  /// Gives the blocks kept for reuse back to the device's allocator.
  virtual recast_status releaseCached() { return RECAST_OK; }
  virtual recast_status copyToDevice(void *dst, const void *src,
                                     size_t bytes) = 0;
  virtual recast_status copyToHost(void *dst, const void *src,
                                   size_t bytes) = 0;
  virtual recast_status fill(void *dst, int value, size_t bytes) = 0;
  virtual recast_status synchronize() = 0;
  virtual recast_status loadModule(const void *image, size_t bytes,
                                   void **handle) = 0;
  virtual recast_status getFunction(void *module, const char *name,
                                    recast_function_t *out) = 0;
  virtual recast_status unloadModule(void *module) = 0;
  virtual recast_status launch(recast_function_t function,
                               const uint32_t grid[3], const uint32_t block[3],
                               uint32_t sharedBytes, void **args) = 0;
  virtual recast_status createEvent(void **out) = 0;
  virtual recast_status recordEvent(void *event) = 0;
  virtual recast_status synchronizeEvent(void *event) = 0;
  virtual recast_status elapsedMs(void *start, void *end, float *ms) = 0;
  virtual recast_status destroyEvent(void *event) = 0;
  virtual recast_status gemm(const recast_gemm_desc &desc) = 0;
};

std::unique_ptr<Backend> createCPUBackend();
/// Fails with RECAST_ERROR_NO_DRIVER / NO_DEVICE and a message when there is
/// no usable CUDA driver or device.
recast_status createCUDABackend(int ordinal, std::unique_ptr<Backend> &out);
int cudaDeviceCount();

/// The reference GEMM (any recast_dtype, FP32 accumulation) on host memory.
void referenceGemm(const recast_gemm_desc &desc);

/// Converts between recast_dtype elements and float on the host.
float loadElement(int32_t dtype, const void *base, int64_t index);
void storeElement(int32_t dtype, void *base, int64_t index, float value);
/// `count` elements from `base[first]` on, widened to float (exactly: every
/// recast_dtype is a subset of f32) or rounded from float to nearest even.
/// One loop per type, so that the common conversions vectorize.
void widenElements(int32_t dtype, const void *base, int64_t first,
                   int64_t count, float *out);
void narrowElements(int32_t dtype, void *base, int64_t first, int64_t count,
                    const float *in);

/// The device compiled code's runtime calls run on: the current device, else
/// a CPU device of the runtime's own.
recast_device_t computeDevice();

} // namespace recast::runtime

struct recast_device {
  recast_device_kind kind;
  std::unique_ptr<recast::runtime::Backend> backend;
  std::mutex mutex;
  // Memory bookkeeping: live recast_malloc blocks and the arena.
  std::unordered_map<void *, size_t> blocks;
  int64_t current = 0, peak = 0;
  void *arena = nullptr;
  size_t arenaCapacity = 0, arenaUsed = 0;
};

struct recast_module {
  recast_device_t device;
  void *handle;
};

struct recast_event {
  recast_device_t device;
  void *handle;
};

#endif // RECAST_LIB_RUNTIME_RUNTIMEINTERNAL_H
