//===- Runtime.cpp - recast_runtime.h: checks, bookkeeping, dispatch ------===//

#include "RuntimeInternal.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace recast::runtime;

namespace {
thread_local std::string lastError;
thread_local recast_status deferredStatus = RECAST_OK;
thread_local std::string deferredMessage;
recast_device_t currentDevice = nullptr;

bool isPowerOfTwo(size_t x) { return x && !(x & (x - 1)); }

size_t alignUp(size_t x, size_t alignment) {
  return (x + alignment - 1) & ~(alignment - 1);
}

void track(recast_device_t device, int64_t delta) {
  device->current += delta;
  if (device->current > device->peak)
    device->peak = device->current;
}
} // namespace

recast::runtime::Backend::~Backend() = default;

recast_device_t recast::runtime::computeDevice() {
  if (currentDevice)
    return currentDevice;
  // No device: compiled CPU code calls the runtime directly on host memory.
  static recast_device_t cpu = [] {
    recast_device_t d = nullptr;
    recast_device_create(RECAST_DEVICE_CPU, 0, &d);
    return d;
  }();
  return cpu;
}

recast_status recast::runtime::fail(recast_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

void recast::runtime::deferError(recast_status status) {
  if (status != RECAST_OK && deferredStatus == RECAST_OK) {
    deferredStatus = status;
    deferredMessage = lastError;
  }
}

std::string recast::runtime::formatBytes(uint64_t bytes) {
  char text[96];
  double value = double(bytes);
  const char *unit = "B";
  if (bytes >= (1ull << 40)) {
    value /= double(1ull << 40);
    unit = "TiB";
  } else if (bytes >= (1ull << 30)) {
    value /= double(1ull << 30);
    unit = "GiB";
  } else if (bytes >= (1ull << 20)) {
    value /= double(1ull << 20);
    unit = "MiB";
  } else if (bytes >= (1ull << 10)) {
    value /= double(1ull << 10);
    unit = "KiB";
  }
  if (unit[0] == 'B')
    std::snprintf(text, sizeof(text), "%" PRIu64 " bytes", bytes);
  else
    std::snprintf(text, sizeof(text), "%.2f %s (%" PRIu64 " bytes)", value,
                  unit, bytes);
  return text;
}

//===----------------------------------------------------------------------===//
// Element conversions
//===----------------------------------------------------------------------===//

static float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

static uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31;
  int exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float v = std::ldexp(float(mantissa), -24);
    return sign ? -v : v;
  }
  return bitsToFloat(sign | (uint32_t(exponent + 112) << 23) |
                     (mantissa << 13));
}

static uint16_t floatToHalf(float f) {
  uint32_t bits = floatToBits(f);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  float a = std::fabs(f);
  if (std::isnan(f))
    return sign | 0x7e00;
  if (a >= 65520.0f) // rounds to infinity
    return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -14)) {
    // Subnormal: multiples of 2^-24, round to nearest even.
    float scaled = a * std::ldexp(1.0f, 24);
    return sign | uint16_t(std::nearbyint(scaled));
  }
  uint32_t abits = floatToBits(a);
  uint32_t exponent = (abits >> 23) - 112;
  uint32_t mantissa = abits & 0x7fffff;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | uint16_t(half);
}

static float bf16ToFloat(uint16_t h) { return bitsToFloat(uint32_t(h) << 16); }

static uint16_t floatToBF16(float f) {
  uint32_t bits = floatToBits(f);
  if (std::isnan(f))
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

/// FP8 with `mantissaBits` and `bias`; E4M3FN has no infinity and one NaN.
static float fp8ToFloat(uint8_t v, int mantissaBits, int bias, bool fn) {
  bool negative = v & 0x80;
  int exponentBits = 7 - mantissaBits;
  int exponent = (v >> mantissaBits) & ((1 << exponentBits) - 1);
  int mantissa = v & ((1 << mantissaBits) - 1);
  float result;
  if (fn && exponent == (1 << exponentBits) - 1 &&
      mantissa == (1 << mantissaBits) - 1)
    result = NAN;
  else if (!fn && exponent == (1 << exponentBits) - 1)
    result = mantissa ? NAN : INFINITY;
  else if (exponent == 0)
    result = std::ldexp(float(mantissa), 1 - bias - mantissaBits);
  else
    result = std::ldexp(float(mantissa + (1 << mantissaBits)),
                        exponent - bias - mantissaBits);
  return negative ? -result : result;
}

/// Round to nearest even, saturating to the largest finite value.
static uint8_t floatToFP8(float f, int mantissaBits, int bias, bool fn) {
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  // 0x7f is a NaN of both formats (E4M3FN's only one).
  if (std::isnan(f))
    return 0x7f;
  // The largest finite value and its code.
  int exponentBits = 7 - mantissaBits;
  int topExponent = (1 << exponentBits) - 1 - (fn ? 0 : 1);
  int topMantissa = (1 << mantissaBits) - 1 - (fn ? 1 : 0);
  uint8_t topCode = uint8_t((topExponent << mantissaBits) | topMantissa);
  float a = std::fabs(f);
  float largest = fp8ToFloat(topCode, mantissaBits, bias, fn);
  if (a >= largest)
    return sign | topCode;
  // Scan the codes: 127 positive values, cheap and exact.
  uint8_t best = 0;
  for (uint8_t code = 1; code <= topCode; ++code) {
    float value = fp8ToFloat(code, mantissaBits, bias, fn);
    if (value > a) {
      float below = fp8ToFloat(code - 1, mantissaBits, bias, fn);
      if (a - below < value - a ||
          (a - below == value - a && ((code - 1) & 1) == 0))
        best = code - 1;
      else
        best = code;
      return sign | best;
    }
  }
  return sign | topCode;
}

float recast::runtime::loadElement(int32_t dtype, const void *base,
                                   int64_t index) {
  switch (dtype) {
  case RECAST_F32:
    return static_cast<const float *>(base)[index];
  case RECAST_F16:
    return halfToFloat(static_cast<const uint16_t *>(base)[index]);
  case RECAST_BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(base)[index]);
  case RECAST_F8E4M3:
    return fp8ToFloat(static_cast<const uint8_t *>(base)[index], 3, 7, true);
  case RECAST_F8E5M2:
    return fp8ToFloat(static_cast<const uint8_t *>(base)[index], 2, 15, false);
  }
  return NAN;
}

void recast::runtime::widenElements(int32_t dtype, const void *base,
                                    int64_t first, int64_t count, float *out) {
  switch (dtype) {
  case RECAST_F32:
    std::memcpy(out, static_cast<const float *>(base) + first,
                size_t(count) * sizeof(float));
    return;
  case RECAST_BF16: {
    const uint16_t *in = static_cast<const uint16_t *>(base) + first;
    for (int64_t i = 0; i < count; ++i)
      out[i] = bf16ToFloat(in[i]);
    return;
  }
  default:
    for (int64_t i = 0; i < count; ++i)
      out[i] = loadElement(dtype, base, first + i);
  }
}

void recast::runtime::narrowElements(int32_t dtype, void *base, int64_t first,
                                     int64_t count, const float *in) {
  if (dtype == RECAST_F32) {
    std::memcpy(static_cast<float *>(base) + first, in,
                size_t(count) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    storeElement(dtype, base, first + i, in[i]);
}

void recast::runtime::storeElement(int32_t dtype, void *base, int64_t index,
                                   float value) {
  switch (dtype) {
  case RECAST_F32:
    static_cast<float *>(base)[index] = value;
    return;
  case RECAST_F16:
    static_cast<uint16_t *>(base)[index] = floatToHalf(value);
    return;
  case RECAST_BF16:
    static_cast<uint16_t *>(base)[index] = floatToBF16(value);
    return;
  case RECAST_F8E4M3:
    static_cast<uint8_t *>(base)[index] = floatToFP8(value, 3, 7, true);
    return;
  case RECAST_F8E5M2:
    static_cast<uint8_t *>(base)[index] = floatToFP8(value, 2, 15, false);
    return;
  }
}

void recast::runtime::referenceGemm(const recast_gemm_desc &d) {
  float scaleA = d.scale_a ? *d.scale_a : 1.0f;
  float scaleB = d.scale_b ? *d.scale_b : 1.0f;
  int64_t sizeA = d.m * d.k, sizeB = d.k * d.n, sizeC = d.m * d.n;
  for (int64_t batch = 0; batch < d.batch; ++batch)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        float sum = 0.0f;
        for (int64_t p = 0; p < d.k; ++p) {
          int64_t ia = d.trans_a ? p * d.m + i : i * d.k + p;
          int64_t ib = d.trans_b ? j * d.k + p : p * d.n + j;
          sum += loadElement(d.type_a, d.a, batch * sizeA + ia) *
                 loadElement(d.type_b, d.b, batch * sizeB + ib);
        }
        float result = d.alpha * scaleA * scaleB * sum;
        int64_t ic = batch * sizeC + i * d.n + j;
        if (d.beta != 0.0f && d.c)
          result += d.beta * loadElement(d.type_c, d.c, ic);
        storeElement(d.type_c, d.d, ic, result);
      }
}

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

#define CHECK_DEVICE(device)                                                   \
  do {                                                                         \
    if (!(device))                                                             \
      return fail(RECAST_ERROR_INVALID_ARGUMENT, "the device is NULL");        \
  } while (0)

extern "C" {

const char *recast_last_error(void) { return lastError.c_str(); }

const char *recast_status_name(recast_status status) {
  switch (status) {
  case RECAST_OK:
    return "RECAST_OK";
  case RECAST_ERROR_INVALID_ARGUMENT:
    return "RECAST_ERROR_INVALID_ARGUMENT";
  case RECAST_ERROR_NO_DRIVER:
    return "RECAST_ERROR_NO_DRIVER";
  case RECAST_ERROR_NO_DEVICE:
    return "RECAST_ERROR_NO_DEVICE";
  case RECAST_ERROR_OUT_OF_MEMORY:
    return "RECAST_ERROR_OUT_OF_MEMORY";
  case RECAST_ERROR_DRIVER:
    return "RECAST_ERROR_DRIVER";
  case RECAST_ERROR_UNSUPPORTED:
    return "RECAST_ERROR_UNSUPPORTED";
  case RECAST_ERROR_NO_LIBRARY:
    return "RECAST_ERROR_NO_LIBRARY";
  }
  return "RECAST_ERROR_UNKNOWN";
}

size_t recast_dtype_size(int32_t dtype) {
  switch (dtype) {
  case RECAST_F32:
    return 4;
  case RECAST_F16:
  case RECAST_BF16:
    return 2;
  case RECAST_F8E4M3:
  case RECAST_F8E5M2:
    return 1;
  }
  return 0;
}

recast_status recast_device_create(recast_device_kind kind, int ordinal,
                                   recast_device_t *out) {
  if (!out)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the output pointer is NULL");
  *out = nullptr;
  std::unique_ptr<Backend> backend;
  if (kind == RECAST_DEVICE_CPU) {
    if (ordinal != 0)
      return fail(RECAST_ERROR_NO_DEVICE,
                  "the CPU backend has one device, 0; asked for " +
                      std::to_string(ordinal));
    backend = createCPUBackend();
  } else if (kind == RECAST_DEVICE_CUDA) {
    if (ordinal < 0)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "the CUDA device ordinal must be >= 0");
    if (recast_status status = createCUDABackend(ordinal, backend))
      return status;
  } else {
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "unknown device kind " + std::to_string(int(kind)));
  }
  auto *device = new recast_device();
  device->kind = kind;
  device->backend = std::move(backend);
  *out = device;
  return RECAST_OK;
}

recast_status recast_device_destroy(recast_device_t device) {
  if (!device)
    return RECAST_OK;
  if (currentDevice == device)
    currentDevice = nullptr;
  recast_status status = device->backend->synchronize();
  for (auto &[ptr, bytes] : device->blocks)
    device->backend->release(ptr);
  if (device->arena)
    device->backend->release(device->arena);
  delete device;
  return status;
}

const char *recast_device_name(recast_device_t device) {
  return device ? device->backend->name() : "";
}

recast_device_kind recast_device_get_kind(recast_device_t device) {
  return device ? device->kind : RECAST_DEVICE_CPU;
}

int recast_cuda_device_count(void) { return cudaDeviceCount(); }

recast_status recast_device_synchronize(recast_device_t device) {
  CHECK_DEVICE(device);
  return device->backend->synchronize();
}

recast_status recast_set_current_device(recast_device_t device) {
  currentDevice = device;
  return RECAST_OK;
}

recast_device_t recast_get_current_device(void) { return currentDevice; }

recast_status recast_malloc(recast_device_t device, size_t bytes, void **out) {
  CHECK_DEVICE(device);
  if (!out)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the output pointer is NULL");
  *out = nullptr;
  if (bytes == 0)
    bytes = 1;
  void *ptr = nullptr;
  if (recast_status status = device->backend->allocate(bytes, &ptr))
    return status;
  std::lock_guard<std::mutex> lock(device->mutex);
  device->blocks[ptr] = bytes;
  track(device, int64_t(bytes));
  *out = ptr;
  return RECAST_OK;
}

recast_status recast_free(recast_device_t device, void *ptr) {
  CHECK_DEVICE(device);
  if (!ptr)
    return RECAST_OK;
  size_t bytes;
  {
    std::lock_guard<std::mutex> lock(device->mutex);
    auto it = device->blocks.find(ptr);
    if (it == device->blocks.end())
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "recast_free: the pointer was not returned by recast_malloc "
                  "on this device (or was freed already)");
    bytes = it->second;
    device->blocks.erase(it);
    track(device, -int64_t(bytes));
  }
  return device->backend->release(ptr);
}

size_t recast_allocation_size(recast_device_t device, const void *ptr) {
  if (!device || !ptr)
    return 0;
  std::lock_guard<std::mutex> lock(device->mutex);
  auto it = device->blocks.find(const_cast<void *>(ptr));
  return it == device->blocks.end() ? 0 : it->second;
}

recast_status recast_memcpy_to_device(recast_device_t device, void *dst,
                                      const void *src, size_t bytes) {
  CHECK_DEVICE(device);
  if (bytes && (!dst || !src))
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "memcpy with a NULL pointer");
  return bytes ? device->backend->copyToDevice(dst, src, bytes) : RECAST_OK;
}

recast_status recast_memcpy_to_host(recast_device_t device, void *dst,
                                    const void *src, size_t bytes) {
  CHECK_DEVICE(device);
  if (bytes && (!dst || !src))
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "memcpy with a NULL pointer");
  return bytes ? device->backend->copyToHost(dst, src, bytes) : RECAST_OK;
}

recast_status recast_memset(recast_device_t device, void *dst, int value,
                            size_t bytes) {
  CHECK_DEVICE(device);
  if (bytes && !dst)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "memset of a NULL pointer");
  return bytes ? device->backend->fill(dst, value, bytes) : RECAST_OK;
}

recast_status recast_arena_create(recast_device_t device, size_t bytes,
                                  size_t alignment) {
  CHECK_DEVICE(device);
  if (alignment == 0)
    alignment = 256;
  if (!isPowerOfTwo(alignment) || alignment > 4096)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "the arena alignment must be a power of two up to 4096, got " +
                    std::to_string(alignment));
  std::lock_guard<std::mutex> lock(device->mutex);
  if (device->arena) {
    device->backend->release(device->arena);
    track(device, -int64_t(device->arenaCapacity));
    device->arena = nullptr;
    device->arenaCapacity = device->arenaUsed = 0;
  }
  if (bytes == 0)
    return RECAST_OK;
  // Both backends return memory aligned to at least 256 bytes; the CPU
  // backend to 4096.
  void *ptr = nullptr;
  if (recast_status status = device->backend->allocate(bytes, &ptr)) {
    if (status == RECAST_ERROR_OUT_OF_MEMORY)
      lastError = "the arena of the memory plan: " + lastError;
    return status;
  }
  device->arena = ptr;
  device->arenaCapacity = bytes;
  track(device, int64_t(bytes));
  return RECAST_OK;
}

recast_status recast_arena_alloc(recast_device_t device, size_t bytes,
                                 size_t alignment, void **out) {
  CHECK_DEVICE(device);
  if (!out)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the output pointer is NULL");
  *out = nullptr;
  if (alignment == 0)
    alignment = 256;
  if (!isPowerOfTwo(alignment) || alignment > 4096)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "the alignment must be a power of two up to 4096, got " +
                    std::to_string(alignment));
  std::lock_guard<std::mutex> lock(device->mutex);
  if (!device->arena)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "recast_arena_alloc: no arena (call recast_arena_create)");
  size_t offset = alignUp(device->arenaUsed, alignment);
  if (offset > device->arenaCapacity || bytes > device->arenaCapacity - offset)
    return fail(RECAST_ERROR_OUT_OF_MEMORY,
                "out of arena memory: asked for " + formatBytes(bytes) +
                    " aligned to " + std::to_string(alignment) + ", " +
                    formatBytes(offset > device->arenaCapacity
                                    ? 0
                                    : device->arenaCapacity - offset) +
                    " available of the arena's " +
                    formatBytes(device->arenaCapacity));
  *out = static_cast<char *>(device->arena) + offset;
  device->arenaUsed = offset + bytes;
  return RECAST_OK;
}

recast_status recast_arena_reset(recast_device_t device) {
  CHECK_DEVICE(device);
  std::lock_guard<std::mutex> lock(device->mutex);
  device->arenaUsed = 0;
  return RECAST_OK;
}

void *recast_arena_base(recast_device_t device) {
  return device ? device->arena : nullptr;
}

size_t recast_arena_capacity(recast_device_t device) {
  return device ? device->arenaCapacity : 0;
}

size_t recast_arena_used(recast_device_t device) {
  return device ? device->arenaUsed : 0;
}

int64_t recast_memory_current(recast_device_t device) {
  return device ? device->current : 0;
}

int64_t recast_memory_peak(recast_device_t device) {
  return device ? device->peak : 0;
}

int64_t recast_memory_reserved(recast_device_t device) {
  if (!device)
    return 0;
  int64_t reserved = device->backend->reservedBytes();
  return reserved < 0 ? device->current : reserved;
}

recast_status recast_memory_release_cached(recast_device_t device) {
  CHECK_DEVICE(device);
  return device->backend->releaseCached();
}

void recast_memory_reset_peak(recast_device_t device) {
  if (device)
    device->peak = device->current;
}

recast_status recast_module_load(recast_device_t device, const void *image,
                                 size_t bytes, recast_module_t *out) {
  CHECK_DEVICE(device);
  if (!out)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the output pointer is NULL");
  *out = nullptr;
  void *handle = nullptr;
  if (recast_status status = device->backend->loadModule(image, bytes, &handle))
    return status;
  *out = new recast_module{device, handle};
  return RECAST_OK;
}

recast_status recast_module_get_function(recast_module_t module,
                                         const char *name,
                                         recast_function_t *out) {
  if (!module || !name || !out)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "recast_module_get_function: NULL argument");
  *out = nullptr;
  return module->device->backend->getFunction(module->handle, name, out);
}

recast_status recast_module_unload(recast_module_t module) {
  if (!module)
    return RECAST_OK;
  recast_status status = module->device->backend->unloadModule(module->handle);
  delete module;
  return status;
}

recast_status recast_launch(recast_device_t device, recast_function_t function,
                            const uint32_t grid[3], const uint32_t block[3],
                            uint32_t shared_bytes, void **args) {
  CHECK_DEVICE(device);
  if (!function)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "launch of a NULL function");
  static const uint32_t one[3] = {1, 1, 1};
  const uint32_t *g = grid ? grid : one, *b = block ? block : one;
  for (int i = 0; i < 3; ++i)
    if (g[i] == 0 || b[i] == 0)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "launch with an empty grid or block");
  return device->backend->launch(function, g, b, shared_bytes, args);
}

recast_status recast_event_create(recast_device_t device, recast_event_t *out) {
  CHECK_DEVICE(device);
  if (!out)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the output pointer is NULL");
  *out = nullptr;
  void *handle = nullptr;
  if (recast_status status = device->backend->createEvent(&handle))
    return status;
  *out = new recast_event{device, handle};
  return RECAST_OK;
}

recast_status recast_event_record(recast_event_t event) {
  if (!event)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the event is NULL");
  return event->device->backend->recordEvent(event->handle);
}

recast_status recast_event_synchronize(recast_event_t event) {
  if (!event)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the event is NULL");
  return event->device->backend->synchronizeEvent(event->handle);
}

recast_status recast_event_elapsed_ms(recast_event_t start, recast_event_t end,
                                      float *ms) {
  if (!start || !end || !ms)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "recast_event_elapsed_ms: NULL argument");
  if (start->device != end->device)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "the two events belong to different devices");
  if (recast_status status = recast_event_synchronize(start))
    return status;
  if (recast_status status = recast_event_synchronize(end))
    return status;
  return start->device->backend->elapsedMs(start->handle, end->handle, ms);
}

recast_status recast_event_destroy(recast_event_t event) {
  if (!event)
    return RECAST_OK;
  recast_status status = event->device->backend->destroyEvent(event->handle);
  delete event;
  return status;
}

recast_status recast_gemm_check(recast_device_kind kind,
                                const recast_gemm_desc *desc) {
  if (!desc)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the GEMM descriptor is NULL");
  const recast_gemm_desc &d = *desc;
  for (int32_t type : {d.type_a, d.type_b, d.type_c})
    if (recast_dtype_size(type) == 0)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "GEMM: unknown element type code " + std::to_string(type));
  if (d.batch < 1 || d.m < 1 || d.n < 1 || d.k < 1)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "GEMM: batch, m, n and k must be >= 1, got " +
                    std::to_string(d.batch) + ", " + std::to_string(d.m) +
                    ", " + std::to_string(d.n) + ", " + std::to_string(d.k));
  if (!d.a || !d.b || !d.d || (d.beta != 0.0f && !d.c))
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "GEMM: A, B and D must not be NULL (nor C when beta != 0)");
  bool fp8A = d.type_a == RECAST_F8E4M3 || d.type_a == RECAST_F8E5M2;
  bool fp8B = d.type_b == RECAST_F8E4M3 || d.type_b == RECAST_F8E5M2;
  if (fp8A != fp8B || (!fp8A && d.type_a != d.type_b))
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "GEMM: A and B must have the same element type (or both be "
                "FP8)");
  if (d.type_c == RECAST_F8E4M3 || d.type_c == RECAST_F8E5M2)
    return fail(RECAST_ERROR_UNSUPPORTED,
                "GEMM: the result type must be f32, f16 or bf16, not FP8");
  if (d.type_a == RECAST_F8E5M2 && d.type_b == RECAST_F8E5M2)
    return fail(RECAST_ERROR_UNSUPPORTED,
                "GEMM: E5M2 x E5M2 is not supported (cuBLASLt has no such "
                "kernel); use E4M3 for one operand");
  if (!fp8A && (d.scale_a || d.scale_b))
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "GEMM: scale pointers apply to FP8 operands only");
  // cuBLASLt's FP8 kernels take the TN layout; the runtime transposes a B
  // stored k x n itself, not an A stored k x m.
  if (kind == RECAST_DEVICE_CUDA && fp8A && d.trans_a)
    return fail(RECAST_ERROR_UNSUPPORTED,
                "GEMM: FP8 on cuBLASLt needs trans_a = 0 (A stored m x k)");
  return RECAST_OK;
}

recast_status recast_gemm_ex(recast_device_t device,
                             const recast_gemm_desc *desc) {
  CHECK_DEVICE(device);
  if (recast_status status = recast_gemm_check(device->kind, desc))
    return status;
  return device->backend->gemm(*desc);
}

void recast_gemm(int32_t type_a, int32_t type_b, int32_t type_c,
                 int32_t trans_a, int32_t trans_b, int64_t batch, int64_t m,
                 int64_t n, int64_t k, const void *a, const void *b, void *c,
                 int32_t overwrite) {
  recast_gemm_desc desc = {};
  desc.type_a = type_a;
  desc.type_b = type_b;
  desc.type_c = type_c;
  desc.trans_a = trans_a;
  desc.trans_b = trans_b;
  desc.batch = batch;
  desc.m = m;
  desc.n = n;
  desc.k = k;
  desc.a = a;
  desc.b = b;
  desc.c = c;
  desc.d = c;
  desc.alpha = 1.0f;
  desc.beta = overwrite ? 0.0f : 1.0f;
  recast_status status = recast_gemm_ex(computeDevice(), &desc);
  if (status != RECAST_OK) {
    lastError = "recast_gemm: " + lastError;
    deferError(status);
  }
}

recast_status recast_take_deferred_error(void) {
  recast_status status = deferredStatus;
  if (status != RECAST_OK)
    lastError = deferredMessage;
  deferredStatus = RECAST_OK;
  deferredMessage.clear();
  return status;
}

} // extern "C"
