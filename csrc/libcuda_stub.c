/*
 * libcuda_stub.c: a no-device stand-in for the CUDA driver library (libcuda.so.1).
 *
 * Why it exists
 *   msinspect's compile-only dry run ("msinspect dryrun") runs MindSpore's real
 *   auto-parallel planner on a machine without a GPU. The planner only needs the
 *   device target to be GPU, so MindSpore's GPU plugin (libmindspore_gpu.so.11.6)
 *   must load. Every library it needs comes from the CUDA 11 user-space wheels on
 *   PyPI except the driver, libcuda.so.1, which ships with the NVIDIA kernel driver
 *   and is on no package registry. The plugin references exactly seven driver entry
 *   points (cuDeviceGetAttribute, cuGetErrorName, cuLaunchKernel,
 *   cuModuleGetFunction, cuModuleLoadDataEx, cuModuleUnload, cuStreamSynchronize).
 *
 * What it does
 *   Defines those entry points (plus cuInit, cuDriverGetVersion and
 *   cuDeviceGetCount for any probe that asks) and makes every one of them answer
 *   CUDA_ERROR_NO_DEVICE (100). Nothing here talks to hardware and nothing can be
 *   computed through it: a dry run compiles graphs and never launches a kernel.
 *   Errors MindSpore prints after the compile (SetDevice, cudaHostAlloc, SyncStream)
 *   are the expected consequence.
 *
 * How it is built
 *   "msinspect setup-dryrun" compiles it with the machine's C compiler into the
 *   private CUDA_HOME under the user's cache (never a system path):
 *     cc -shared -fPIC -O2 -Wl,-soname,libcuda.so.1 -o .../lib64/libcuda.so.1 libcuda_stub.c
 *   It is only ever put on LD_LIBRARY_PATH of dry-run processes.
 */

typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_NO_DEVICE 100

#define NO_DEVICE_ENTRY(name) \
    CUresult name(void) { return CUDA_ERROR_NO_DEVICE; }

CUresult cuInit(unsigned int flags)
{
    (void)flags;
    return CUDA_ERROR_NO_DEVICE;
}

CUresult cuDriverGetVersion(int *version)
{
    if (version) *version = 0;
    return CUDA_ERROR_NO_DEVICE;
}

CUresult cuDeviceGetCount(int *count)
{
    if (count) *count = 0;
    return CUDA_ERROR_NO_DEVICE;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev)
{
    (void)attrib;
    (void)dev;
    if (value) *value = 0;
    return CUDA_ERROR_NO_DEVICE;
}

/* Names the error so that MindSpore's messages read "CUDA_ERROR_NO_DEVICE". */
CUresult cuGetErrorName(CUresult error, const char **name)
{
    if (name) *name = (error == CUDA_ERROR_NO_DEVICE) ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **text)
{
    if (text) *text = (error == CUDA_ERROR_NO_DEVICE)
        ? "no CUDA-capable device is detected (msinspect dry-run stand-in for libcuda.so.1)"
        : "unknown error (msinspect dry-run stand-in for libcuda.so.1)";
    return CUDA_SUCCESS;
}

/* Kernel and module entry points: a compile-only run never reaches them. */
NO_DEVICE_ENTRY(cuLaunchKernel)
NO_DEVICE_ENTRY(cuModuleGetFunction)
NO_DEVICE_ENTRY(cuModuleLoadDataEx)
NO_DEVICE_ENTRY(cuModuleUnload)
NO_DEVICE_ENTRY(cuStreamSynchronize)
