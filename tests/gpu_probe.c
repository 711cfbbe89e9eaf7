/* tests/gpu_probe.c - decides once, apart from what is tested, whether a GPU
   is there to test on (`make test-gpu` runs it before the GPU tests).
   Present: cudaGetDeviceCount succeeds with at least one device, and the
   driver supports the CUDA version this program (and the tests beside it)
   was built with (cudaDriverGetVersion >= CUDART_VERSION: CUDA 13 needs a
   driver of the R580 series or later). Prints one line, "gpu present: ..."
   (exit 0) or "no usable GPU: ..." naming the failed call or the driver
   floor (exit 1). */
#include <stdio.h>
#include <cuda_runtime_api.h>

int main(void) {
    int n = 0, driver = 0, runtime = CUDART_VERSION;
    cudaError_t e = cudaDriverGetVersion(&driver);
    if (e != cudaSuccess) {
        printf("no usable GPU: cudaDriverGetVersion failed: %s (%s)\n", cudaGetErrorString(e), cudaGetErrorName(e));
        return 1;
    }
    if (driver == 0) {
        printf("no usable GPU: no NVIDIA driver is installed (cudaDriverGetVersion: 0); built with CUDA %d.%d, which needs "
               "a driver for CUDA %d.%d or later%s\n", runtime / 1000, runtime % 1000 / 10, runtime / 1000, runtime % 1000 / 10,
               runtime >= 13000 ? " (R580 or later)" : "");
        return 1;
    }
    if (driver < runtime) {
        printf("no usable GPU: the driver supports CUDA %d.%d, the tests were built with CUDA %d.%d: install a driver for "
               "CUDA %d.%d or later%s\n", driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10,
               runtime / 1000, runtime % 1000 / 10, runtime >= 13000 ? " (R580 or later)" : "");
        return 1;
    }
    if ((e = cudaGetDeviceCount(&n)) != cudaSuccess || n < 1) {
        printf("no usable GPU: cudaGetDeviceCount: %s (%s), %d devices (driver for CUDA %d.%d)\n",
               e == cudaSuccess ? "success" : cudaGetErrorString(e), e == cudaSuccess ? "cudaSuccess" : cudaGetErrorName(e), n,
               driver / 1000, driver % 1000 / 10);
        return 1;
    }
    printf("gpu present: %d device%s, a driver for CUDA %d.%d, tests built with CUDA %d.%d\n", n, n == 1 ? "" : "s",
           driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    return 0;
}
