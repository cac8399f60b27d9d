//===- CUDABackend.cpp - recast_runtime.h on an NVIDIA GPU ----------------===//
//
// The CUDA driver (libcuda.so.1) and cuBLASLt are loaded with dlopen when a
// device is created, so nothing links against CUDA: the runtime builds and
// runs on machines without a GPU and says so when a GPU is asked for. The
// types and enumerators below are the driver's and cuBLASLt's ABI (cuda.h,
// cublasLt.h, library_types.h of CUDA 12/13).
//
// One device: the primary context of the ordinal, one stream on which every
// copy, launch, GEMM and event is queued, and cuBLASLt's handle and workspace.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

using namespace recast::runtime;

namespace {

//===----------------------------------------------------------------------===//
// The driver API, resolved at run time
//===----------------------------------------------------------------------===//

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;

struct Driver {
  void *handle = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  std::string error; // why the driver is unusable, if it is
  bool initialized = false;
};

/// The driver, loaded and initialized once. $RECAST_CUDA_DRIVER overrides
/// the library name (tests point it at a missing file).
Driver &getDriver() {
  static Driver driver = [] {
    Driver d;
    const char *name = std::getenv("RECAST_CUDA_DRIVER");
    if (!name || !*name)
      name = "libcuda.so.1";
    d.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!d.handle) {
      const char *why = dlerror();
      d.error = std::string("no CUDA GPU/driver present: cannot load the "
                            "CUDA driver library ") +
                name + " (" + (why ? why : "not found") +
                "); install the NVIDIA driver or use --device=cpu";
      return d;
    }
    bool missing = false;
    std::string missingName;
    auto bind = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(d.handle, symbol));
      if (!fn && !missing) {
        missing = true;
        missingName = symbol;
      }
    };
    bind(d.cuInit, "cuInit");
    bind(d.cuDeviceGetCount, "cuDeviceGetCount");
    bind(d.cuDeviceGet, "cuDeviceGet");
    bind(d.cuDeviceGetName, "cuDeviceGetName");
    bind(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    bind(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    bind(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    bind(d.cuCtxSetCurrent, "cuCtxSetCurrent");
    bind(d.cuStreamCreate, "cuStreamCreate");
    bind(d.cuStreamDestroy, "cuStreamDestroy_v2");
    bind(d.cuStreamSynchronize, "cuStreamSynchronize");
    bind(d.cuMemAlloc, "cuMemAlloc_v2");
    bind(d.cuMemAllocManaged, "cuMemAllocManaged");
    bind(d.cuMemFree, "cuMemFree_v2");
    bind(d.cuMemGetInfo, "cuMemGetInfo_v2");
    bind(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    bind(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    bind(d.cuMemcpyAsync, "cuMemcpyAsync");
    bind(d.cuMemsetD8Async, "cuMemsetD8Async");
    bind(d.cuModuleLoadData, "cuModuleLoadData");
    bind(d.cuModuleGetFunction, "cuModuleGetFunction");
    bind(d.cuModuleUnload, "cuModuleUnload");
    bind(d.cuLaunchKernel, "cuLaunchKernel");
    bind(d.cuEventCreate, "cuEventCreate");
    bind(d.cuEventRecord, "cuEventRecord");
    bind(d.cuEventSynchronize, "cuEventSynchronize");
    bind(d.cuEventElapsedTime, "cuEventElapsedTime");
    bind(d.cuEventDestroy, "cuEventDestroy_v2");
    bind(d.cuGetErrorName, "cuGetErrorName");
    bind(d.cuGetErrorString, "cuGetErrorString");
    if (missing) {
      d.error = std::string("the CUDA driver library ") + name + " lacks " +
                missingName + " (driver too old?)";
      return d;
    }
    CUresult init = d.cuInit(0);
    if (init != CUDA_SUCCESS) {
      const char *text = nullptr;
      d.cuGetErrorString(init, &text);
      d.error = std::string("no CUDA GPU/driver present: cuInit failed (") +
                (text ? text : "error " + std::to_string(init)) + ")";
      return d;
    }
    d.initialized = true;
    return d;
  }();
  return driver;
}

std::string describe(const Driver &d, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(result, &name);
  if (d.cuGetErrorString)
    d.cuGetErrorString(result, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    s += std::string(": ") + text;
  return s;
}

//===----------------------------------------------------------------------===//
// cuBLASLt, resolved at run time
//===----------------------------------------------------------------------===//

using cublasStatus = int;
using LtHandle = void *;
using LtMatmulDesc = void *;
using LtLayout = void *;
using LtPreference = void *;
struct LtAlgo {
  uint64_t data[8];
};
struct LtHeuristic {
  LtAlgo algo;
  size_t workspaceSize;
  cublasStatus state;
  float wavesCount;
  int reserved[4];
};

constexpr int CUDA_R_32F = 0, CUDA_R_8I = 3, CUDA_R_16F = 2, CUDA_R_16BF = 14,
              CUDA_R_8F_E4M3 = 28, CUDA_R_8F_E5M2 = 29;
constexpr int CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
constexpr int CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;
constexpr int DESC_TRANSA = 3, DESC_TRANSB = 4, DESC_A_SCALE_POINTER = 17,
              DESC_B_SCALE_POINTER = 18;
constexpr int LAYOUT_BATCH_COUNT = 5, LAYOUT_STRIDED_BATCH_OFFSET = 6;
constexpr int PREF_MAX_WORKSPACE_BYTES = 1, PREF_MIN_ALIGNMENT_A_BYTES = 5,
              PREF_MIN_ALIGNMENT_B_BYTES = 6, PREF_MIN_ALIGNMENT_C_BYTES = 7,
              PREF_MIN_ALIGNMENT_D_BYTES = 8;
constexpr int TRANSFORM_DESC_TRANSA = 2;

struct Lt {
  void *handle = nullptr;
  cublasStatus (*create)(LtHandle *);
  cublasStatus (*destroy)(LtHandle);
  cublasStatus (*descCreate)(LtMatmulDesc *, int, int);
  cublasStatus (*descDestroy)(LtMatmulDesc);
  cublasStatus (*descSet)(LtMatmulDesc, int, const void *, size_t);
  cublasStatus (*layoutCreate)(LtLayout *, int, uint64_t, uint64_t, int64_t);
  cublasStatus (*layoutDestroy)(LtLayout);
  cublasStatus (*layoutSet)(LtLayout, int, const void *, size_t);
  cublasStatus (*prefCreate)(LtPreference *);
  cublasStatus (*prefDestroy)(LtPreference);
  cublasStatus (*prefSet)(LtPreference, int, const void *, size_t);
  cublasStatus (*heuristic)(LtHandle, LtMatmulDesc, LtLayout, LtLayout,
                            LtLayout, LtLayout, LtPreference, int,
                            LtHeuristic *, int *);
  cublasStatus (*matmul)(LtHandle, LtMatmulDesc, const void *, const void *,
                         LtLayout, const void *, LtLayout, const void *,
                         const void *, LtLayout, void *, LtLayout,
                         const LtAlgo *, void *, size_t, CUstream);
  const char *(*statusString)(cublasStatus);
  cublasStatus (*transformDescCreate)(void **, int);
  cublasStatus (*transformDescDestroy)(void *);
  cublasStatus (*transformDescSet)(void *, int, const void *, size_t);
  cublasStatus (*transform)(LtHandle, void *, const void *, const void *,
                            LtLayout, const void *, const void *, LtLayout,
                            void *, LtLayout, CUstream);
  std::string error;
};

Lt &getLt() {
  static Lt lt = [] {
    Lt l;
    // $RECAST_CUBLASLT names the library; else the loader's, then the
    // toolkit's.
    std::vector<std::string> names;
    if (const char *env = std::getenv("RECAST_CUBLASLT"); env && *env)
      names.push_back(env);
    else
      names = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
               "/usr/local/cuda/lib64/libcublasLt.so"};
    for (const std::string &name : names)
      if ((l.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!l.handle) {
      l.error = "cannot load cuBLASLt (" + names.front() +
                (names.size() > 1 ? " and others" : "") +
                "): install the CUDA toolkit's cuBLAS or set RECAST_CUBLASLT "
                "to its path";
      return l;
    }
    std::string missing;
    auto bind = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(l.handle, symbol));
      if (!fn && missing.empty())
        missing = symbol;
    };
    bind(l.create, "cublasLtCreate");
    bind(l.destroy, "cublasLtDestroy");
    bind(l.descCreate, "cublasLtMatmulDescCreate");
    bind(l.descDestroy, "cublasLtMatmulDescDestroy");
    bind(l.descSet, "cublasLtMatmulDescSetAttribute");
    bind(l.layoutCreate, "cublasLtMatrixLayoutCreate");
    bind(l.layoutDestroy, "cublasLtMatrixLayoutDestroy");
    bind(l.layoutSet, "cublasLtMatrixLayoutSetAttribute");
    bind(l.prefCreate, "cublasLtMatmulPreferenceCreate");
    bind(l.prefDestroy, "cublasLtMatmulPreferenceDestroy");
    bind(l.prefSet, "cublasLtMatmulPreferenceSetAttribute");
    bind(l.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    bind(l.matmul, "cublasLtMatmul");
    bind(l.statusString, "cublasLtGetStatusString");
    bind(l.transformDescCreate, "cublasLtMatrixTransformDescCreate");
    bind(l.transformDescDestroy, "cublasLtMatrixTransformDescDestroy");
    bind(l.transformDescSet, "cublasLtMatrixTransformDescSetAttribute");
    bind(l.transform, "cublasLtMatrixTransform");
    if (!missing.empty()) {
      l.error = "cuBLASLt lacks " + missing;
      dlclose(l.handle);
      l.handle = nullptr;
    }
    return l;
  }();
  return lt;
}

int cudaType(int32_t dtype) {
  switch (dtype) {
  case RECAST_F32:
    return CUDA_R_32F;
  case RECAST_F16:
    return CUDA_R_16F;
  case RECAST_BF16:
    return CUDA_R_16BF;
  case RECAST_F8E4M3:
    return CUDA_R_8F_E4M3;
  case RECAST_F8E5M2:
    return CUDA_R_8F_E5M2;
  }
  return -1;
}

class CUDABackend : public Backend {
public:
  CUDABackend(Driver &d) : d(d) {}
  ~CUDABackend() override {
    d.cuCtxSetCurrent(context);
    if (stream)
      d.cuStreamSynchronize(stream);
    if (ltHandle)
      getLt().destroy(ltHandle);
    if (workspace)
      d.cuMemFree(workspace);
    if (scratch)
      release(reinterpret_cast<void *>(scratch));
    releaseCached();
    if (stream)
      d.cuStreamDestroy(stream);
    if (context)
      d.cuDevicePrimaryCtxRelease(device);
  }

  recast_status init(int ordinal) {
    int count = 0;
    if (CUresult r = d.cuDeviceGetCount(&count))
      return fail(RECAST_ERROR_NO_DEVICE,
                  "no CUDA GPU/driver present: " + describe(d, r));
    if (count == 0)
      return fail(RECAST_ERROR_NO_DEVICE,
                  "no CUDA GPU/driver present: the driver reports no device");
    if (ordinal >= count)
      return fail(RECAST_ERROR_NO_DEVICE,
                  "CUDA device " + std::to_string(ordinal) +
                      " does not exist (" + std::to_string(count) +
                      " device(s))");
    if (CUresult r = d.cuDeviceGet(&device, ordinal))
      return driverError("cuDeviceGet", r);
    char buffer[256] = {0};
    d.cuDeviceGetName(buffer, sizeof(buffer) - 1, device);
    int major = 0, minor = 0;
    d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           device);
    d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           device);
    deviceName = std::string(buffer) + " (sm_" + std::to_string(major) +
                 std::to_string(minor) + ")";
    if (CUresult r = d.cuDevicePrimaryCtxRetain(&context, device))
      return driverError("cuDevicePrimaryCtxRetain", r);
    if (CUresult r = d.cuCtxSetCurrent(context))
      return driverError("cuCtxSetCurrent", r);
    if (CUresult r = d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
      return driverError("cuStreamCreate", r);
    return RECAST_OK;
  }

  const char *name() const override { return deviceName.c_str(); }

  recast_status allocate(size_t bytes, void **out) override {
    bind();
    std::lock_guard<std::mutex> lock(cacheMutex);
    BlockKey key{managed,
                 (bytes + kBlockGranule - 1) / kBlockGranule * kBlockGranule};
    if (auto cached = cachedBlocks.find(key); cached != cachedBlocks.end()) {
      *out = reinterpret_cast<void *>(cached->second);
      cachedBlocks.erase(cached);
      return RECAST_OK;
    }
    CUdeviceptr ptr = 0;
    auto driverAllocate = [&] {
      return managed
                 ? d.cuMemAllocManaged(&ptr, key.second, CU_MEM_ATTACH_GLOBAL)
                 : d.cuMemAlloc(&ptr, key.second);
    };
    CUresult r = driverAllocate();
    // Blocks kept for reuse are given back before giving up.
    if (r == CUDA_ERROR_OUT_OF_MEMORY && !cachedBlocks.empty()) {
      releaseCachedLocked();
      r = driverAllocate();
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      size_t free = 0, total = 0;
      d.cuMemGetInfo(&free, &total);
      return fail(RECAST_ERROR_OUT_OF_MEMORY,
                  "out of device memory on " + deviceName + ": asked for " +
                      formatBytes(bytes) + ", " + formatBytes(free) +
                      " available of " + formatBytes(total));
    }
    if (r)
      return driverError("cuMemAlloc", r);
    blockKeys[ptr] = key;
    reserved += key.second;
    *out = reinterpret_cast<void *>(ptr);
    return RECAST_OK;
  }
  recast_status release(void *ptr) override {
    bind();
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto block = reinterpret_cast<CUdeviceptr>(ptr);
    auto it = blockKeys.find(block);
    if (it == blockKeys.end())
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "release: not a block of " + deviceName);
    if (caching) {
      cachedBlocks.emplace(it->second, block);
      return RECAST_OK;
    }
    return freeBlock(it);
  }
  int64_t reservedBytes() const override {
    std::lock_guard<std::mutex> lock(cacheMutex);
    return int64_t(reserved);
  }
  recast_status releaseCached() override {
    bind();
    std::lock_guard<std::mutex> lock(cacheMutex);
    return releaseCachedLocked();
  }
  recast_status copyToDevice(void *dst, const void *src,
                             size_t bytes) override {
    bind();
    if (CUresult r = d.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                                         src, bytes, stream))
      return driverError("cuMemcpyHtoDAsync", r);
    return synchronize(); // the host buffer may go away after the call
  }
  recast_status copyToHost(void *dst, const void *src, size_t bytes) override {
    bind();
    if (CUresult r = d.cuMemcpyDtoHAsync(
            dst, reinterpret_cast<CUdeviceptr>(src), bytes, stream))
      return driverError("cuMemcpyDtoHAsync", r);
    return synchronize();
  }
  recast_status fill(void *dst, int value, size_t bytes) override {
    bind();
    if (CUresult r = d.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(dst),
                                       (unsigned char)value, bytes, stream))
      return driverError("cuMemsetD8Async", r);
    return RECAST_OK;
  }
  recast_status synchronize() override {
    bind();
    if (CUresult r = d.cuStreamSynchronize(stream))
      return driverError("cuStreamSynchronize", r);
    return RECAST_OK;
  }

  recast_status loadModule(const void *image, size_t, void **handle) override {
    bind();
    if (!image)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "a CUDA module needs an image (cubin, fatbin or PTX)");
    CUmodule module = nullptr;
    if (CUresult r = d.cuModuleLoadData(&module, image))
      return driverError("cuModuleLoadData (is the image built for this "
                         "GPU's architecture, " +
                             deviceName + "?)",
                         r);
    *handle = module;
    return RECAST_OK;
  }
  recast_status getFunction(void *module, const char *name,
                            recast_function_t *out) override {
    bind();
    CUfunction f = nullptr;
    if (CUresult r =
            d.cuModuleGetFunction(&f, static_cast<CUmodule>(module), name))
      return driverError(std::string("cuModuleGetFunction('") + name + "')", r);
    *out = f;
    return RECAST_OK;
  }
  recast_status unloadModule(void *module) override {
    bind();
    if (CUresult r = d.cuModuleUnload(static_cast<CUmodule>(module)))
      return driverError("cuModuleUnload", r);
    return RECAST_OK;
  }
  recast_status launch(recast_function_t function, const uint32_t grid[3],
                       const uint32_t block[3], uint32_t sharedBytes,
                       void **args) override {
    bind();
    if (CUresult r = d.cuLaunchKernel(
            static_cast<CUfunction>(function), grid[0], grid[1], grid[2],
            block[0], block[1], block[2], sharedBytes, stream, args, nullptr))
      return driverError("cuLaunchKernel", r);
    return RECAST_OK;
  }

  recast_status createEvent(void **out) override {
    bind();
    CUevent event = nullptr;
    if (CUresult r = d.cuEventCreate(&event, CU_EVENT_DEFAULT))
      return driverError("cuEventCreate", r);
    *out = event;
    return RECAST_OK;
  }
  recast_status recordEvent(void *event) override {
    bind();
    if (CUresult r = d.cuEventRecord(static_cast<CUevent>(event), stream))
      return driverError("cuEventRecord", r);
    return RECAST_OK;
  }
  recast_status synchronizeEvent(void *event) override {
    bind();
    if (CUresult r = d.cuEventSynchronize(static_cast<CUevent>(event)))
      return driverError("cuEventSynchronize", r);
    return RECAST_OK;
  }
  recast_status elapsedMs(void *start, void *end, float *ms) override {
    bind();
    if (CUresult r = d.cuEventElapsedTime(ms, static_cast<CUevent>(start),
                                          static_cast<CUevent>(end)))
      return driverError("cuEventElapsedTime", r);
    return RECAST_OK;
  }
  recast_status destroyEvent(void *event) override {
    bind();
    if (CUresult r = d.cuEventDestroy(static_cast<CUevent>(event)))
      return driverError("cuEventDestroy", r);
    return RECAST_OK;
  }

  recast_status gemm(const recast_gemm_desc &g) override;
  /// B (batch x k x n, one byte per element) transposed into scratch
  /// memory, for cuBLASLt's FP8 kernels, which want B stored n x k.
  recast_status transposeBytes(const void *b, int64_t batch, int64_t k,
                               int64_t n, const void **out);

  // For compiled host code (mgpu* entry points).
  CUstream getStream() const { return stream; }
  void setManaged(bool on) { managed = on; }
  void bind() { d.cuCtxSetCurrent(context); }

private:
  /// Device blocks are kept by whether they are managed and their size,
  /// rounded up to a granule.
  using BlockKey = std::pair<bool, size_t>;
  static constexpr size_t kBlockGranule = 512;

  recast_status releaseCachedLocked() {
    recast_status status = RECAST_OK;
    for (auto &[key, block] : cachedBlocks)
      if (recast_status s = freeBlock(blockKeys.find(block)))
        status = s;
    cachedBlocks.clear();
    return status;
  }

  recast_status
  freeBlock(std::unordered_map<CUdeviceptr, BlockKey>::iterator block) {
    reserved -= block->second.second;
    CUdeviceptr ptr = block->first;
    blockKeys.erase(block);
    if (CUresult r = d.cuMemFree(ptr))
      return driverError("cuMemFree", r);
    return RECAST_OK;
  }

  recast_status driverError(const std::string &what, CUresult r) {
    return fail(r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_DEVICE
                    ? RECAST_ERROR_NO_DEVICE
                    : RECAST_ERROR_DRIVER,
                what + " failed on " + deviceName + ": " + describe(d, r));
  }
  recast_status ltError(const std::string &what, cublasStatus s) {
    const char *text = getLt().statusString ? getLt().statusString(s) : "";
    return fail(RECAST_ERROR_DRIVER, "cuBLASLt " + what + " failed: " +
                                         std::string(text ? text : "") +
                                         " (status " + std::to_string(s) + ")");
  }

  Driver &d;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::string deviceName;
  bool managed = false;
  /// A training step allocates the same sizes at every call, and each
  /// cuMemAlloc / cuMemFree costs tens of microseconds (cuMemFree also waits
  /// for the device): freed blocks are kept and handed out again for the
  /// same size, as PyTorch's caching allocator does. One stream orders every
  /// use of a block, so reuse needs no event. RECAST_CUDA_CACHING=0 frees
  /// at once.
  bool caching = [] {
    const char *value = std::getenv("RECAST_CUDA_CACHING");
    return !value || std::strcmp(value, "0") != 0;
  }();
  mutable std::mutex cacheMutex;
  std::unordered_map<CUdeviceptr, BlockKey> blockKeys;
  std::multimap<BlockKey, CUdeviceptr> cachedBlocks;
  size_t reserved = 0;
  LtHandle ltHandle = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
  CUdeviceptr scratch = 0;
  size_t scratchBytes = 0;
};

recast_status CUDABackend::transposeBytes(const void *b, int64_t batch,
                                          int64_t k, int64_t n,
                                          const void **out) {
  Lt &lt = getLt();
  size_t bytes = size_t(batch * k * n);
  if (bytes > scratchBytes) {
    if (scratch)
      release(reinterpret_cast<void *>(scratch));
    scratch = 0;
    scratchBytes = 0;
    if (recast_status status =
            allocate(bytes, reinterpret_cast<void **>(&scratch)))
      return status;
    scratchBytes = bytes;
  }
  // As int8 with a unit float scale: the bytes move unchanged. Our row-major
  // k x n B is a column-major n x k matrix; its transpose, column-major
  // k x n (ld k), is B stored n x k row-major.
  void *desc = nullptr;
  LtLayout in = nullptr, result = nullptr;
  int op = CUBLAS_OP_T;
  float one = 1.0f, zero = 0.0f;
  int32_t batches = int32_t(batch);
  int64_t stride = k * n;
  recast_status status = RECAST_OK;
  auto check = [&](const char *what, cublasStatus s) {
    if (s && status == RECAST_OK)
      status = ltError(what, s);
    return s == 0;
  };
  if (check("MatrixTransformDescCreate",
            lt.transformDescCreate(&desc, CUDA_R_32F)) &&
      check("set TRANSA", lt.transformDescSet(desc, TRANSFORM_DESC_TRANSA, &op,
                                              sizeof(op))) &&
      check("layout", lt.layoutCreate(&in, CUDA_R_8I, n, k, n)) &&
      check("layout", lt.layoutCreate(&result, CUDA_R_8I, k, n, k))) {
    if (batch > 1)
      for (LtLayout layout : {in, result}) {
        check("set BATCH_COUNT", lt.layoutSet(layout, LAYOUT_BATCH_COUNT,
                                              &batches, sizeof(batches)));
        check("set STRIDED_BATCH_OFFSET",
              lt.layoutSet(layout, LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                           sizeof(stride)));
      }
    if (status == RECAST_OK)
      check("MatrixTransform",
            lt.transform(ltHandle, desc, &one, b, in, &zero, nullptr, nullptr,
                         reinterpret_cast<void *>(scratch), result, stream));
  }
  for (LtLayout layout : {in, result})
    if (layout)
      lt.layoutDestroy(layout);
  if (desc)
    lt.transformDescDestroy(desc);
  *out = reinterpret_cast<const void *>(scratch);
  return status;
}

/// Row-major D = alpha op(A) op(B) + beta C as cuBLASLt's column-major
/// D^T = alpha op(B)^T op(A)^T + beta C^T: the operands swap, the shapes do
/// not transpose (a row-major r x c matrix is a column-major c x r one).
recast_status CUDABackend::gemm(const recast_gemm_desc &g) {
  bind();
  Lt &lt = getLt();
  if (!lt.handle)
    return fail(RECAST_ERROR_NO_LIBRARY, lt.error);
  if (!ltHandle) {
    if (cublasStatus s = lt.create(&ltHandle))
      return ltError("cublasLtCreate", s);
    workspaceBytes = 32u << 20;
    if (CUresult r = d.cuMemAlloc(&workspace, workspaceBytes)) {
      workspace = 0;
      workspaceBytes = 0;
      if (r != CUDA_ERROR_OUT_OF_MEMORY)
        return driverError("cuMemAlloc (cuBLASLt workspace)", r);
    }
  }
  bool fp8 = g.type_a == RECAST_F8E4M3 || g.type_a == RECAST_F8E5M2;
  if (fp8 && !g.trans_b) {
    // Compiled code stores B k x n; cuBLASLt's FP8 kernels want n x k.
    recast_gemm_desc transposed = g;
    if (recast_status status =
            transposeBytes(g.b, g.batch, g.k, g.n, &transposed.b))
      return status;
    transposed.trans_b = 1;
    return gemm(transposed);
  }
  bool allowTF32 = std::getenv("RECAST_ALLOW_TF32") != nullptr;
  int compute = g.type_a == RECAST_F32 && allowTF32
                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                    : CUBLAS_COMPUTE_32F;
  LtMatmulDesc desc = nullptr;
  LtLayout la = nullptr, lb = nullptr, lc = nullptr;
  LtPreference pref = nullptr;
  recast_status status = RECAST_OK;
  auto check = [&](const char *what, cublasStatus s) {
    if (s && status == RECAST_OK)
      status = ltError(what, s);
    return s == 0;
  };
  // cuBLASLt's A is our B, its B our A.
  int opA = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  int opB = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  // Stored (column-major) shapes: our B is k x n row-major = n x k
  // column-major (ld n), or n x k row-major = k x n column-major (ld k).
  uint64_t rowsA = g.trans_b ? g.k : g.n, colsA = g.trans_b ? g.n : g.k;
  uint64_t rowsB = g.trans_a ? g.m : g.k, colsB = g.trans_a ? g.k : g.m;
  int64_t strideA = g.k * g.n, strideB = g.m * g.k, strideC = g.m * g.n;
  int32_t batch = int32_t(g.batch);
  if (check("MatmulDescCreate", lt.descCreate(&desc, compute, CUDA_R_32F)) &&
      check("set TRANSA", lt.descSet(desc, DESC_TRANSA, &opA, sizeof(opA))) &&
      check("set TRANSB", lt.descSet(desc, DESC_TRANSB, &opB, sizeof(opB))) &&
      (!fp8 || !g.scale_b ||
       check("set A_SCALE_POINTER",
             lt.descSet(desc, DESC_A_SCALE_POINTER, &g.scale_b,
                        sizeof(g.scale_b)))) &&
      (!fp8 || !g.scale_a ||
       check("set B_SCALE_POINTER",
             lt.descSet(desc, DESC_B_SCALE_POINTER, &g.scale_a,
                        sizeof(g.scale_a)))) &&
      check("layout A", lt.layoutCreate(&la, cudaType(g.type_b), rowsA, colsA,
                                        int64_t(rowsA))) &&
      check("layout B", lt.layoutCreate(&lb, cudaType(g.type_a), rowsB, colsB,
                                        int64_t(rowsB))) &&
      check("layout C",
            lt.layoutCreate(&lc, cudaType(g.type_c), g.n, g.m, g.n))) {
    if (batch > 1) {
      for (auto [layout, stride] :
           {std::pair{la, strideA}, {lb, strideB}, {lc, strideC}}) {
        check("set BATCH_COUNT",
              lt.layoutSet(layout, LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
        check("set STRIDED_BATCH_OFFSET",
              lt.layoutSet(layout, LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                           sizeof(stride)));
      }
    }
    LtHeuristic result = {};
    int found = 0;
    uint64_t maxWorkspace = workspaceBytes;
    // The heuristic assumes 256-byte aligned operands unless told otherwise;
    // compiled code passes views at any element offset (a filter's tap), and
    // every batch entry must be as aligned as the first.
    auto alignment = [&](const void *ptr, int64_t batchStride, int32_t type) {
      uint64_t bits = uint64_t(reinterpret_cast<uintptr_t>(ptr)) | 256;
      if (batch > 1)
        bits |= uint64_t(batchStride) * recast_dtype_size(type);
      return uint32_t(bits & (~bits + 1));
    };
    const void *cPointer = g.c ? g.c : g.d;
    // cuBLASLt's A, B, C and D: our B, A, C and D.
    std::pair<int, uint32_t> alignments[] = {
        {PREF_MIN_ALIGNMENT_A_BYTES, alignment(g.b, strideA, g.type_b)},
        {PREF_MIN_ALIGNMENT_B_BYTES, alignment(g.a, strideB, g.type_a)},
        {PREF_MIN_ALIGNMENT_C_BYTES, alignment(cPointer, strideC, g.type_c)},
        {PREF_MIN_ALIGNMENT_D_BYTES, alignment(g.d, strideC, g.type_c)}};
    auto setAlignments = [&] {
      for (auto &[attribute, bytes] : alignments)
        if (!check("set MIN_ALIGNMENT_*_BYTES",
                   lt.prefSet(pref, attribute, &bytes, sizeof(bytes))))
          return false;
      return true;
    };
    if (status == RECAST_OK &&
        check("MatmulPreferenceCreate", lt.prefCreate(&pref)) &&
        check("set MAX_WORKSPACE_BYTES",
              lt.prefSet(pref, PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
                         sizeof(maxWorkspace))) &&
        setAlignments() &&
        check("MatmulAlgoGetHeuristic",
              lt.heuristic(ltHandle, desc, la, lb, lc, lc, pref, 1, &result,
                           &found))) {
      if (found == 0) {
        status = fail(
            RECAST_ERROR_UNSUPPORTED,
            "cuBLASLt has no algorithm for this GEMM on " + deviceName +
                " (types " + std::to_string(g.type_a) + "/" +
                std::to_string(g.type_b) + "/" + std::to_string(g.type_c) +
                ", m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
                " k=" + std::to_string(g.k) + ")");
      } else {
        check("Matmul", lt.matmul(ltHandle, desc, &g.alpha, g.b, la, g.a, lb,
                                  &g.beta, cPointer, lc, g.d, lc, &result.algo,
                                  reinterpret_cast<void *>(workspace),
                                  workspaceBytes, stream));
      }
    }
  }
  if (pref)
    lt.prefDestroy(pref);
  for (LtLayout layout : {la, lb, lc})
    if (layout)
      lt.layoutDestroy(layout);
  if (desc)
    lt.descDestroy(desc);
  return status;
}

} // namespace

int recast::runtime::cudaDeviceCount() {
  Driver &d = getDriver();
  if (!d.initialized)
    return 0;
  int count = 0;
  if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS)
    return 0;
  return count;
}

recast_status
recast::runtime::createCUDABackend(int ordinal, std::unique_ptr<Backend> &out) {
  Driver &d = getDriver();
  if (!d.initialized)
    return fail(d.handle ? RECAST_ERROR_NO_DEVICE : RECAST_ERROR_NO_DRIVER,
                d.error);
  auto backend = std::make_unique<CUDABackend>(d);
  if (recast_status status = backend->init(ordinal))
    return status;
  out = std::move(backend);
  return RECAST_OK;
}

//===----------------------------------------------------------------------===//
// The entry points of compiled host code (gpu-to-llvm and its embedding of
// gpu.binary call these), bound to the current CUDA device.
//===----------------------------------------------------------------------===//

namespace {
CUDABackend *currentCUDA() {
  recast_device_t device = recast_get_current_device();
  if (!device || device->kind != RECAST_DEVICE_CUDA)
    return nullptr;
  return static_cast<CUDABackend *>(device->backend.get());
}

void reportDeferred(recast_status status) {
  if (status != RECAST_OK)
    deferError(status);
}
} // namespace

extern "C" {

void recast_cuda_set_managed_memory(recast_device_t device, int on) {
  if (device && device->kind == RECAST_DEVICE_CUDA)
    static_cast<CUDABackend *>(device->backend.get())->setManaged(on != 0);
}

void *recast_cuda_stream(recast_device_t device) {
  if (!device || device->kind != RECAST_DEVICE_CUDA)
    return nullptr;
  return static_cast<CUDABackend *>(device->backend.get())->getStream();
}

void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  CUDABackend *cuda = currentCUDA();
  void *module = nullptr;
  if (!cuda) {
    reportDeferred(fail(RECAST_ERROR_NO_DEVICE,
                        "compiled GPU code ran without a current CUDA device"));
    return nullptr;
  }
  reportDeferred(cuda->loadModule(data, gpuBlobSize, &module));
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  (void)optLevel;
  return mgpuModuleLoad(data, 0);
}

void mgpuModuleUnload(void *module) {
  if (CUDABackend *cuda = currentCUDA(); cuda && module)
    cuda->unloadModule(module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CUDABackend *cuda = currentCUDA();
  if (!cuda || !module)
    return nullptr;
  recast_function_t f = nullptr;
  reportDeferred(cuda->getFunction(module, name, &f));
  return f;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount) {
  (void)stream;
  (void)extra;
  (void)paramsCount;
  CUDABackend *cuda = currentCUDA();
  if (!cuda || !function)
    return;
  uint32_t grid[3] = {uint32_t(gridX), uint32_t(gridY), uint32_t(gridZ)};
  uint32_t block[3] = {uint32_t(blockX), uint32_t(blockY), uint32_t(blockZ)};
  reportDeferred(cuda->launch(function, grid, block, uint32_t(smem), params));
}

/// One stream per device: compiled code's streams are the device's stream.
void *mgpuStreamCreate() {
  CUDABackend *cuda = currentCUDA();
  return cuda ? cuda->getStream() : nullptr;
}

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *) {
  if (CUDABackend *cuda = currentCUDA())
    reportDeferred(cuda->synchronize());
}

} // extern "C"
