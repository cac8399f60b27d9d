/*===- recast_runtime.h - recast's runtime, one C API for CPU and CUDA ---===*\
 *
 * The runtime executes what recast compiles. One API serves both devices:
 *
 *   recast_device_t dev;
 *   if (recast_device_create(RECAST_DEVICE_CUDA, 0, &dev) != RECAST_OK)
 *     fprintf(stderr, "%s\n", recast_last_error()); // "no CUDA driver found"
 *   recast_arena_create(dev, plan_bytes, 256);      // the memory plan's arena
 *   void *x; recast_arena_alloc(dev, bytes, 256, &x);
 *   recast_memcpy_to_device(dev, x, host, bytes);
 *   recast_module_t m; recast_module_load(dev, image, size, &m);
 *   recast_function_t f; recast_module_get_function(m, "step_kernel", &f);
 *   recast_launch(dev, f, grid, block, 0, args);
 *   recast_gemm_ex(dev, &gemm);                     // cuBLASLt / BLAS
 *   recast_device_synchronize(dev);
 *   recast_device_destroy(dev);
 *
 * The CPU backend runs on the host; its "device memory" is host memory, its
 * modules are shared objects (or the running process) whose functions take
 * packed arguments (`void f(void **args)`, MLIR's packed calling convention).
 *
 * The CUDA backend loads libcuda.so.1 and libcublasLt.so with dlopen when a
 * CUDA device is created, so neither the runtime nor anything linked to it
 * depends on CUDA at link time; without a driver, recast_device_create fails
 * with RECAST_ERROR_NO_DRIVER and a message saying so.
 *
 * Every function returns a recast_status; on failure, recast_last_error()
 * returns a message for the calling thread that names what went wrong
 * (out-of-memory names the bytes asked for and the bytes available).
 *
\*===----------------------------------------------------------------------===*/

#ifndef RECAST_RUNTIME_RECAST_RUNTIME_H
#define RECAST_RUNTIME_RECAST_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum recast_status {
  RECAST_OK = 0,
  RECAST_ERROR_INVALID_ARGUMENT = 1,
  RECAST_ERROR_NO_DRIVER = 2, /* libcuda.so.1 could not be loaded */
  RECAST_ERROR_NO_DEVICE = 3, /* the driver reports no (such) device */
  RECAST_ERROR_OUT_OF_MEMORY = 4,
  RECAST_ERROR_DRIVER = 5,      /* a driver or library call failed */
  RECAST_ERROR_UNSUPPORTED = 6, /* valid, but this backend cannot do it */
  RECAST_ERROR_NO_LIBRARY = 7,  /* libcublasLt / BLAS could not be loaded */
} recast_status;

typedef enum recast_device_kind {
  RECAST_DEVICE_CPU = 0,
  RECAST_DEVICE_CUDA = 1,
  /* Makes every 32-bit value a valid recast_device_kind, so that a caller's
   * unknown kind reaches recast_device_create's error instead of being
   * undefined behavior in C++. Not a device. */
  RECAST_DEVICE_KIND_MAX_ENUM = 0x7fffffff,
} recast_device_kind;

/* Element types of GEMM operands. The numbering is part of the ABI of
 * `recast_gemm`, which compiled code calls. */
typedef enum recast_dtype {
  RECAST_F32 = 0,
  RECAST_F16 = 1,
  RECAST_BF16 = 2,
  RECAST_F8E4M3 = 3, /* f8E4M3FN */
  RECAST_F8E5M2 = 4,
} recast_dtype;

typedef struct recast_device *recast_device_t;
typedef struct recast_module *recast_module_t;
typedef struct recast_event *recast_event_t;
typedef void *recast_function_t;

/* The message of the calling thread's last failure ("" if none). */
const char *recast_last_error(void);
/* A static name of `status` ("RECAST_ERROR_NO_DRIVER", ...). */
const char *recast_status_name(recast_status status);
/* Size in bytes of one element of `dtype`, 0 for an unknown code. */
size_t recast_dtype_size(int32_t dtype);

/*===-------------------------- Devices -----------------------------------===*/

/* Creates device `ordinal` of `kind` with one stream (CUDA: the primary
 * context of the device). */
recast_status recast_device_create(recast_device_kind kind, int ordinal,
                                   recast_device_t *out);
recast_status recast_device_destroy(recast_device_t device);
/* "cpu", or the CUDA device's name. */
const char *recast_device_name(recast_device_t device);
recast_device_kind recast_device_get_kind(recast_device_t device);
/* Number of CUDA devices (0 without a driver or device, never an error). */
int recast_cuda_device_count(void);
/* Waits for all work queued on the device's stream. */
recast_status recast_device_synchronize(recast_device_t device);
/* The device code run by compiled steps (`recast_gemm`, `mgpu*`) uses. */
recast_status recast_set_current_device(recast_device_t device);
recast_device_t recast_get_current_device(void);

/*===------------------------ Memory --------------------------------------===*/

/* Device memory outside the arena (arguments, parameters). */
recast_status recast_malloc(recast_device_t device, size_t bytes, void **out);
recast_status recast_free(recast_device_t device, void *ptr);
/* The size of the block `ptr` points to the start of, as recast_malloc was
 * asked for it (at least 1); 0 when `ptr` is not such a block on `device`. */
size_t recast_allocation_size(recast_device_t device, const void *ptr);
recast_status recast_memcpy_to_device(recast_device_t device, void *dst,
                                      const void *src, size_t bytes);
recast_status recast_memcpy_to_host(recast_device_t device, void *dst,
                                    const void *src, size_t bytes);
recast_status recast_memset(recast_device_t device, void *dst, int value,
                            size_t bytes);

/* The arena: the one allocation a memory plan asks for. Creating it again
 * frees the previous one. Sub-allocations are bump-allocated and released
 * all at once by recast_arena_reset. */
recast_status recast_arena_create(recast_device_t device, size_t bytes,
                                  size_t alignment);
recast_status recast_arena_alloc(recast_device_t device, size_t bytes,
                                 size_t alignment, void **out);
recast_status recast_arena_reset(recast_device_t device);
/* The arena's base address (NULL when none). */
void *recast_arena_base(recast_device_t device);
size_t recast_arena_capacity(recast_device_t device);
size_t recast_arena_used(recast_device_t device);

/* Device memory bookkeeping over recast_malloc and the arena: bytes held
 * now, the peak since the last reset, and the number of allocations. */
int64_t recast_memory_current(recast_device_t device);
int64_t recast_memory_peak(recast_device_t device);
void recast_memory_reset_peak(recast_device_t device);
/* Bytes held from the device's own allocator: on CUDA, the blocks in use
 * and those freed blocks the runtime keeps to hand out again for the same
 * size (rounded up to 512 bytes; RECAST_CUDA_CACHING=0 frees them at once);
 * elsewhere the bytes in use. */
int64_t recast_memory_reserved(recast_device_t device);
/* Gives the kept blocks back to the device's allocator (an allocation that
 * does not fit does it too before failing). */
recast_status recast_memory_release_cached(recast_device_t device);

/*===------------------------ Modules and launches ------------------------===*/

/* CUDA: a cubin, fatbin or NUL-terminated PTX image. CPU: `image` is the
 * path of a shared object (NUL-terminated; `bytes` ignored), or NULL for the
 * running process. */
recast_status recast_module_load(recast_device_t device, const void *image,
                                 size_t bytes, recast_module_t *out);
recast_status recast_module_get_function(recast_module_t module,
                                         const char *name,
                                         recast_function_t *out);
recast_status recast_module_unload(recast_module_t module);
/* CUDA: launches the kernel on the device's stream (args: the addresses of
 * the kernel's parameters). CPU: calls `void f(void **args)` once; grid and
 * block must be {1, 1, 1} or NULL. */
recast_status recast_launch(recast_device_t device, recast_function_t function,
                            const uint32_t grid[3], const uint32_t block[3],
                            uint32_t shared_bytes, void **args);

/*===------------------------ Events and timing ---------------------------===*/

recast_status recast_event_create(recast_device_t device, recast_event_t *out);
recast_status recast_event_record(recast_event_t event);
recast_status recast_event_synchronize(recast_event_t event);
/* Milliseconds between two recorded events (both synchronized first). */
recast_status recast_event_elapsed_ms(recast_event_t start, recast_event_t end,
                                      float *ms);
recast_status recast_event_destroy(recast_event_t event);

/*===------------------------ GEMM ----------------------------------------===*/

/* D = alpha * op(A) * op(B) + beta * C, row-major, per batch entry, with
 * FP32 accumulation; C and D may alias (they do for `C += A * B`).
 * op(A) is m x k (A stored m x k, or k x m when trans_a), op(B) is k x n
 * (B stored k x n, or n x k when trans_b). Batches are contiguous.
 * FP8 A/B (E4M3/E5M2; not both E5M2) take optional device scale pointers
 * (one float each, NULL = 1) and, on cuBLASLt, need trans_a = 0 and
 * trans_b = 1 (its "TN" layout). C/D: f32, f16 or bf16. The runtime owns the
 * cuBLASLt handle and workspace. */
typedef struct recast_gemm_desc {
  int32_t type_a, type_b, type_c; /* recast_dtype; D has type_c */
  int32_t trans_a, trans_b;
  int64_t batch, m, n, k;
  const void *a, *b;
  const void *c;
  void *d;
  float alpha, beta;
  const float *scale_a, *scale_b;
} recast_gemm_desc;

recast_status recast_gemm_ex(recast_device_t device,
                             const recast_gemm_desc *desc);
/* Checks a descriptor without running it (shapes, types, pointers). */
recast_status recast_gemm_check(recast_device_kind kind,
                                const recast_gemm_desc *desc);

/* The entry point compiled code calls (recast-contractions-to-calls):
 * C += op(A) * op(B) on the current device, row-major, contiguous, batched,
 * with op() as in recast_gemm_desc (trans_a: A stored k x m; trans_b: B
 * stored n x k); with `overwrite` non-zero, C = op(A) * op(B) and C's
 * previous contents are not read (the call replaces a zero fill). A
 * failure is kept and reported by recast_take_deferred_error. */
void recast_gemm(int32_t type_a, int32_t type_b, int32_t type_c,
                 int32_t trans_a, int32_t trans_b, int64_t batch, int64_t m,
                 int64_t n, int64_t k, const void *a, const void *b, void *c,
                 int32_t overwrite);
/* Returns (and clears) the first failure of a call made by compiled code
 * since the last call, RECAST_OK if none; the message is then in
 * recast_last_error(). */
recast_status recast_take_deferred_error(void);

/*===------------------------ 2-D convolution -----------------------------===*/

/* A 2-D convolution, or its filter gradient, computed as GEMMs: blocks of
 * the im2col matrix are gathered into a workspace the runtime owns and
 * multiplied with `recast_gemm_ex`, so no im2col matrix of the whole batch
 * is ever allocated. Two layouts:
 *  - NHWC images and HWCF filters: one im2col row per output pixel (KH * KW
 *    * C values), gathered a block of rows at a time (at most 2 MiB, or one
 *    row); the filter is then a (KH * KW * C) x F matrix and the output an
 *    (N * OH * OW) x F one;
 *  - NCHW images and FCHW filters (PyTorch's): one im2col column per output
 *    pixel (C * KH * KW values), gathered for a block of images at a time
 *    (at most 2 MiB, or one image; several images when an image has few
 *    pixels, so that the GEMM stays wide); the filter is then an F x (C * KH
 *    * KW) matrix and each output image an F x (OH * OW) one, written in
 *    place when a block is one image.
 * The input is read at x[n, oh * stride_h + kh * dilation_h, ow * stride_w
 * + kw * dilation_w, c] (NHWC; likewise NCHW): padding is the caller's (a
 * padded input). CPU devices only. */
typedef enum recast_conv2d_kind {
  /* out[n, oh, ow, f] += sum_{kh, kw, c} x[...] * b[kh, kw, c, f]
   * (b: the filter, out: the output, n x oh x ow x f). */
  RECAST_CONV2D_FORWARD = 0,
  /* out[kh, kw, c, f] += sum_{n, oh, ow} x[...] * b[n, oh, ow, f]
   * (b: the output's gradient, out: the filter's gradient). */
  RECAST_CONV2D_FILTER_GRADIENT = 1,
} recast_conv2d_kind;

typedef enum recast_conv2d_layout {
  RECAST_CONV2D_NHWC = 0, /* x, output: NHWC; filter: HWCF */
  RECAST_CONV2D_NCHW = 1, /* x, output: NCHW; filter: FCHW */
} recast_conv2d_layout;

typedef struct recast_conv2d_desc {
  int32_t kind;       /* recast_conv2d_kind */
  int32_t layout;     /* recast_conv2d_layout */
  int32_t type_x;     /* x and b: f32, f16 or bf16 */
  int32_t type_out;   /* out: f32, f16 or bf16 */
  int64_t n, h, w, c; /* x: n x h x w x c (NCHW: n x c x h x w) */
  int64_t kh, kw, f;  /* the filter: kh x kw x c x f (FCHW: f x c x kh x kw) */
  int64_t oh, ow;     /* the output: n x oh x ow x f (NCHW: n x f x oh x ow) */
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  const void *x, *b;
  void *out;
  /* Non-zero: out = the sum, its previous contents not read, instead of
   * out += the sum. */
  int32_t overwrite;
} recast_conv2d_desc;

recast_status recast_conv2d_ex(recast_device_t device,
                               const recast_conv2d_desc *desc);
/* The entry point compiled code calls (recast-contractions-to-calls with
 * `convolutions`), on the current device or the CPU; a failure is kept for
 * recast_take_deferred_error. */
void recast_conv2d(int32_t kind, int32_t layout, int32_t type_x,
                   int32_t type_out, int64_t n, int64_t h, int64_t w, int64_t c,
                   int64_t kh, int64_t kw, int64_t f, int64_t oh, int64_t ow,
                   int64_t stride_h, int64_t stride_w, int64_t dilation_h,
                   int64_t dilation_w, const void *x, const void *b, void *out,
                   int32_t overwrite);

/*===------------------------ CPU threads ---------------------------------===*/

/* Runs block(context, i) for i in [0, blocks) on the calling thread and the
 * CPU backend's worker threads (recast_cpu_threads() in all), and returns
 * when all have run; blocks go to whichever thread asks first. Compiled code
 * calls it for the kernels recast-kernel-loops splits across threads; the
 * GEMM and convolution calls share the same threads. Called from inside a
 * block, or while another thread runs blocks, it runs them in order on the
 * calling thread. */
void recast_parallel_for(void (*block)(void *context, int64_t index),
                         void *context, int64_t blocks);

/*===------------------------ Backend details -----------------------------===*/

/* The CBLAS the CPU backend's GEMM uses ("" if none: a reference loop).
 * $RECAST_BLAS names another library, or "none". */
const char *recast_cpu_blas_library(void);
/* The core OpenBLAS runs its kernels for ("SkylakeX", "Haswell", ...; "" for
 * another BLAS). recast names the core it selects before it loads OpenBLAS,
 * and loads a copy of its own where the process already holds one built for
 * another core (numpy's, in a Python process). */
const char *recast_cpu_blas_core(void);
/* How the CPU backend multiplies bf16 operands into f32: "cblas_sbgemm" (the
 * library's), "amx_bf16" (recast's AMX tile kernel, where the CPU and the
 * kernel grant the tiles), "avx512_bf16" (recast's vdpbf16ps kernel, on CPUs
 * with AVX512_BF16, or $RECAST_BF16_GEMM=avx512) or "widened" (operands
 * widened to f32 for sgemm, or the reference loop without a BLAS;
 * $RECAST_BF16_GEMM=widen). */
const char *recast_cpu_bf16_gemm(void);
/* Threads the CPU backend runs on: $OPENBLAS_NUM_THREADS, else
 * $OMP_NUM_THREADS, else the hardware's. The backend splits GEMMs (by
 * rows), convolutions and the loops recast-lower-to-cpu splits across its
 * own worker threads, and has OpenBLAS run single-threaded (in a process
 * that shares recast's OpenBLAS, numpy's products then run on one thread
 * too). */
int recast_cpu_threads(void);
/* Sets the threads the CPU backend's parallel work runs on from now on, at
 * most 255 (0: recast_cpu_threads() again), and returns the setting it
 * replaces (0 when none was in force), so that a caller can put it back.
 * GEMMs, convolutions and kernels started while it is in force split
 * across that many; a step compiled for another count stays correct, its
 * blocks shared among the threads there are. Process-wide: for one caller
 * choosing its steps' threads, not for steps running concurrently. */
int recast_set_cpu_threads(int threads);
/* The OpenBLAS core type (the OPENBLAS_CORETYPE value) recast selects on this
 * CPU, or NULL where OpenBLAS's own detection is used. OpenBLAS 0.3.21
 * (Debian 12) does not recognize recent Xeons and falls back to its generic
 * "Prescott" kernels, several times slower than its AVX-512 ones. It reads
 * the variable once, when it is loaded: a program that links OpenBLAS must
 * set it before it starts (recast-run re-executes itself with it set). */
const char *recast_cpu_blas_core_type(void);
/* CUDA: allocate with cuMemAllocManaged from now on (memory the host may
 * also touch, which compiled host code needs for its few host-side copies). */
void recast_cuda_set_managed_memory(recast_device_t device, int on);
/* CUDA: the device's stream (a CUstream), NULL for other devices. */
void *recast_cuda_stream(recast_device_t device);

#ifdef __cplusplus
}
#endif

#endif /* RECAST_RUNTIME_RECAST_RUNTIME_H */
