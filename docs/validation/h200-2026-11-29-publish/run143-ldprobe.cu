// One thread: time batches of 16 loads of device memory (64 B apart), each batch
// consumed, then a fence (as a publisher does), by the kind of load.
#include <cstdio>
#include <cstdint>
#include <initializer_list>
#define N 16
__device__ __forceinline__ uint64_t ld_sys(const uint64_t *p){uint64_t v;asm volatile("ld.relaxed.sys.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ uint64_t ld_gpu(const uint64_t *p){uint64_t v;asm volatile("ld.relaxed.gpu.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ uint64_t ld_gpu_nm(const uint64_t *p){uint64_t v;asm volatile("ld.relaxed.gpu.u64 %0,[%1];":"=l"(v):"l"(p));return v;}
__device__ __forceinline__ uint64_t ld_acq(const uint64_t *p){uint64_t v;asm volatile("ld.acquire.gpu.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ uint64_t ld_vol(const uint64_t *p){return *(volatile const uint64_t*)p;}
__device__ __forceinline__ uint64_t ld_cg(const uint64_t *p){uint64_t v;asm volatile("ld.global.cg.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
template<int K> __device__ uint64_t ld(const uint64_t*p){ if(K==0)return ld_sys(p); if(K==1)return ld_gpu(p); if(K==2)return ld_gpu_nm(p); if(K==3)return ld_acq(p); if(K==4) return ld_vol(p); return ld_cg(p);}
template<int K> __global__ void probe(const uint64_t *a, int stride, int fence, unsigned long long *out, int reps){
  uint64_t sum=0; unsigned long long tot=0;
  for(int r=0;r<reps;r++){
    const uint64_t *b = a + (r % 64) * N * stride;
    unsigned long long t0=clock64();
    uint64_t v[N];
    #pragma unroll
    for(int j=0;j<N;j++) v[j]=ld<K>(b + j*stride);
    #pragma unroll
    for(int j=0;j<N;j++) sum+=v[j];
    if(fence) asm volatile("fence.acq_rel.gpu;":::"memory");
    unsigned long long t1=clock64();
    tot+=t1-t0;
  }
  out[0]=tot; out[1]=sum;
}
int main(){
  uint64_t *a; cudaMalloc(&a, 64*N*8*8*2); cudaMemset(a,1,64*N*8*8*2);
  unsigned long long *o; cudaMallocManaged(&o,16);
  const char* names[]={"relaxed.sys","relaxed.gpu","relaxed.gpu(no clobber)","acquire.gpu","volatile","ld.cg"};
  for(int stride: {8,1}) for(int fence: {1,0}) for(int k=0;k<6;k++){
    int reps=20000;
    switch(k){case 0: probe<0><<<1,1>>>(a,stride,fence,o,reps);break; case 1: probe<1><<<1,1>>>(a,stride,fence,o,reps);break;
      case 2: probe<2><<<1,1>>>(a,stride,fence,o,reps);break; case 3: probe<3><<<1,1>>>(a,stride,fence,o,reps);break;
      case 4: probe<4><<<1,1>>>(a,stride,fence,o,reps);break; default: probe<5><<<1,1>>>(a,stride,fence,o,reps);}
    cudaDeviceSynchronize();
    printf("%-26s stride %3d B fence %d: %8.1f cycles per batch of %d\n", names[k], stride*8, fence, (double)o[0]/reps, N);
  }
  return 0;
}
