// Reference for gpuio_printf: the same lines as printf_flood.cu, printed with CUDA's
// own device printf, timed from the launch through the synchronize that flushes
// them (stdout redirected to a file by the caller). The FIFO is sized so nothing is
// dropped; count the lines in the output to check.
//   nvcc -O2 -arch=sm_90 -o cuda_printf_ref cuda_printf_ref.cu && ./cuda_printf_ref 16 > out.txt
#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void flood(unsigned long long lines) {
  unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  for (unsigned long long i = 0; i < lines; ++i)
    printf("thread %08llu line %08llu of the printf flood .............\n", t, i);
}

int main(int argc, char **argv) {
  unsigned long long lines = argc > 1 ? strtoull(argv[1], nullptr, 10) : 16;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceSetLimit(cudaLimitPrintfFifoSize, (size_t)1 << 30);
  flood<<<1, 32>>>(1); // warm up: context, module, FIFO
  cudaDeviceSynchronize();
  fflush(stdout);
  auto t0 = std::chrono::steady_clock::now();
  flood<<<sms, 1024>>>(lines);
  cudaError_t e = cudaDeviceSynchronize();
  fflush(stdout);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  unsigned long long n = (unsigned long long)sms * 1024 * lines;
  fprintf(stderr, "cuda printf: %d x 1024 threads x %llu lines = %llu lines of 64 B in %.3f s: %.3f M lines/s, %.1f MB/s (%s)\n",
          sms, lines, n, s, n / s / 1e6, n * 64.0 / s / 1e6, cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
