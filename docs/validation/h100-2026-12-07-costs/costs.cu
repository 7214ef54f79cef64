// Intrinsic costs of single-thread memory operations on the GPU (one thread, dependent chains).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
typedef unsigned long long u64;
struct Desc { u64 w[48]; };
#define N 4096
__device__ __forceinline__ u64 ld_acq_gpu(const u64 *p){u64 v;asm volatile("ld.acquire.gpu.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ u64 ld_acq_sys(const u64 *p){u64 v;asm volatile("ld.acquire.sys.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ u64 ld_rlx_gpu(const u64 *p){u64 v;asm volatile("ld.relaxed.gpu.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ u64 ld_rlx_sys(const u64 *p){u64 v;asm volatile("ld.relaxed.sys.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ u64 ld_weak(const u64 *p){u64 v;asm volatile("ld.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ u64 ld_nc(const u64 *p){u64 v;asm volatile("ld.global.nc.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ u64 ld_gen(const u64 *p){u64 v;asm volatile("ld.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ u64 atom_add(u64 *p,u64 a){u64 v;asm volatile("atom.relaxed.gpu.global.add.u64 %0,[%1],%2;":"=l"(v):"l"(p),"l"(a):"memory");return v;}
__device__ __forceinline__ u64 cas_gpu(u64 *p,u64 c,u64 n){u64 v;asm volatile("atom.relaxed.gpu.global.cas.b64 %0,[%1],%2,%3;":"=l"(v):"l"(p),"l"(c),"l"(n):"memory");return v;}
__device__ __forceinline__ void red_and_rel(u64 *p,u64 m){asm volatile("red.release.gpu.global.and.b64 [%0],%1;"::"l"(p),"l"(m):"memory");}
__device__ __forceinline__ void red_and_rlx(u64 *p,u64 m){asm volatile("red.relaxed.gpu.global.and.b64 [%0],%1;"::"l"(p),"l"(m):"memory");}
__device__ __forceinline__ void st_rel(u64 *p,u64 v){asm volatile("st.release.gpu.global.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void st_rlx(u64 *p,u64 v){asm volatile("st.relaxed.gpu.global.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void st_rlx_sys(u64 *p,u64 v){asm volatile("st.relaxed.sys.global.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void f_acqrel_gpu(){asm volatile("fence.acq_rel.gpu;":::"memory");}
__device__ __forceinline__ void f_sc_gpu(){asm volatile("fence.sc.gpu;":::"memory");}
__device__ __forceinline__ void f_acqrel_sys(){asm volatile("fence.acq_rel.sys;":::"memory");}
__device__ __forceinline__ void f_acqrel_cta(){asm volatile("fence.acq_rel.cta;":::"memory");}
__device__ __forceinline__ u64 gt(){u64 t;asm volatile("mov.u64 %0,%%globaltimer;":"=l"(t));return t;}

__device__ __forceinline__ void ld_v2_weak(const u64 *p, u64 &a, u64 &b){asm volatile("ld.global.v2.u64 {%0,%1},[%2];":"=l"(a),"=l"(b):"l"(p):"memory");}
__device__ __forceinline__ void ld_v2_rlx(const u64 *p, u64 &a, u64 &b){asm volatile("ld.relaxed.gpu.global.v2.u64 {%0,%1},[%2];":"=l"(a),"=l"(b):"l"(p):"memory");}
__device__ __forceinline__ u64 ld_v2_sum(const u64 *p){u64 a,b; ld_v2_weak(p,a,b); return a+b;}
#define T(name, ...) { u64 x=0; u64 t0=gt(); long long c0=clock64(); for(int i=0;i<N;++i){ __VA_ARGS__; } long long c1=clock64(); u64 t1=gt(); out[k*3]=t1-t0; out[k*3+1]=c1-c0; out[k*3+2]=x; {const char*nm=name; int j=0; for(;nm[j]&&j<63;++j) nb[k*64+j]=nm[j]; nb[k*64+j]=0;} ++k; }

__global__ void probe(u64 *dev, u64 *host, const __grid_constant__ Desc d, u64 *out, int *count, char *nb, u64 z){
  int k=0;
  u64 *a = dev, *b = dev + 256, *c = dev + 512;
  volatile u64 sink=0;
  // loads, dependent chains
  T("ld.acquire.gpu (dev)", x = ld_acq_gpu(a + (x&z)))
  T("ld.relaxed.gpu (dev)", x = ld_rlx_gpu(a + (x&z)))
  T("ld.relaxed.sys (dev)", x = ld_rlx_sys(a + (x&z)))
  T("ld weak (dev, L1 hit)", x = ld_weak(a + (x&z)))
  T("acq.gpu + weak ld of another line", x = ld_acq_gpu(a + (x&z)); x = ld_weak(b + (x&z)))
  T("acq.gpu + nc ld of another line", x = ld_acq_gpu(a + (x&z)); x = ld_nc(b + (x&z)))
  T("acq.gpu + relaxed.gpu ld of another line", x = ld_acq_gpu(a + (x&z)); x = ld_rlx_gpu(b + (x&z)))
  T("acq.gpu + grid_constant ld", x = ld_acq_gpu(a + (x&z)); x = d.w[(x&z)+5]+x)
  T("acq.gpu + generic ld of grid_constant", x = ld_acq_gpu(a + (x&z)); x = ld_gen(&d.w[(x&z)+7]))
  T("acq.gpu + 6 relaxed.sys lds one batch", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s0=ld_rlx_sys(q),s1=ld_rlx_sys(q+1),s2=ld_rlx_sys(q+2),s3=ld_rlx_sys(q+16),s4=ld_rlx_sys(q+17),s5=ld_rlx_sys(q+32); x=(s0+s1+s2+s3+s4+s5)&z;})
  T("acq.gpu + 16 relaxed.sys lds one batch", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<16;++j) s+=ld_rlx_sys(q+j*3); x=s&z;})
  T("acq.gpu + 16 weak lds one batch", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<16;++j) s+=ld_weak(q+j*3); x=s&z;})
  T("acq.gpu + 16 nc lds one batch", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<16;++j) s+=ld_nc(q+j*3); x=s&z;})
  T("acq.gpu + 4 rlx.sys lds, one line", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<4;++j) s+=ld_rlx_sys(q+j); x=s&z;})
  T("acq.gpu + 8 rlx.sys lds, one line", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<8;++j) s+=ld_rlx_sys(q+j); x=s&z;})
  T("acq.gpu + 8 rlx.sys lds, 8 lines", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<8;++j) s+=ld_rlx_sys(q+16*j); x=s&z;})
  T("acq.gpu + 12 rlx.sys lds, 3 lines", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<12;++j) s+=ld_rlx_sys(q+(j/4)*16+(j%4)); x=s&z;})
  T("acq.gpu + 4 v2 weak lds, one line", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<4;++j) s+=ld_v2_sum(q+2*j); x=s&z;})
  T("acq.gpu + 8 v2 weak lds, 3 lines", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<8;++j) s+=ld_v2_sum(q+(j/3)*16+2*(j%3)); x=s&z;})
  T("acq.gpu + 8 v2 relaxed lds, 3 lines", x = ld_acq_gpu(a + (x&z)); {const u64 *q=b+(x&z); u64 s=0; _Pragma("unroll") for(int j=0;j<8;++j){u64 u,v; ld_v2_rlx(q+(j/3)*16+2*(j%3),u,v); s+=u+v;} x=s&z;})
  T("atom.add.gpu (fetch-add)", x = atom_add(c + (x&z), 1))
  T("atom.cas.gpu", x = cas_gpu(c + 8 + (x&z), x, x+1))
  T("fetch-add + acquire of another line (dependent)", x = atom_add(c + (x&z), 1); x = ld_acq_gpu(a + (x&z)))
  T("fetch-add and acquire together", {u64 p = atom_add(c + (x&z), 1); u64 w = ld_acq_gpu(a + 64 + (x&z)); x = (p+w)&z;})
  // release side
  T("red.relaxed.gpu and", red_and_rlx(c+16, ~7ull))
  T("red.release.gpu and", red_and_rel(c+16, ~7ull))
  T("st.release.gpu", st_rel(c+16, (u64)i))
  T("fence.acq_rel.gpu + st.relaxed", f_acqrel_gpu(); st_rlx(c+16,(u64)i))
  T("fence.sc.gpu + st.relaxed", f_sc_gpu(); st_rlx(c+16,(u64)i))
  T("fence.acq_rel.cta + st.relaxed", f_acqrel_cta(); st_rlx(c+16,(u64)i))
  T("fence.acq_rel.sys + st.relaxed", f_acqrel_sys(); st_rlx(c+16,(u64)i))
  T("acq.gpu then red.release.gpu", x = ld_acq_gpu(a + (x&z)); red_and_rel(c+16+(x&z), ~7ull))
  T("acq.gpu then red.relaxed.gpu", x = ld_acq_gpu(a + (x&z)); red_and_rlx(c+16+(x&z), ~7ull))
  // with PCIe traffic: an acquire read of host memory, then the give back
  T("ld.acquire.sys (host)", x = ld_acq_sys(host + (x&z)))
  T("ld.relaxed.sys (host)", x = ld_rlx_sys(host + (x&z)))
  T("acq.sys host, red.release.gpu", x = ld_acq_sys(host + (x&z)); red_and_rel(c+16+(x&z), ~7ull))
  T("acq.sys host, red.relaxed.gpu", x = ld_acq_sys(host + (x&z)); red_and_rlx(c+16+(x&z), ~7ull))
  T("st.relaxed.sys host, acq.sys host, red.release.gpu", st_rlx_sys(host+8, (u64)i); x = ld_acq_sys(host + (x&z)); red_and_rel(c+16+(x&z), ~7ull))
  T("rlx.sys host, fence.acq_rel.sys, st.relaxed", x = ld_rlx_sys(host + (x&z)); f_acqrel_sys(); st_rlx(c+16+(x&z),(u64)i))
  T("rlx.sys host, fence.acq_rel.gpu, st.relaxed", x = ld_rlx_sys(host + (x&z)); f_acqrel_gpu(); st_rlx(c+16+(x&z),(u64)i))
  T("2 staggered rlx.sys host lds (issue both, use both)", {u64 p=ld_rlx_sys(host+(x&z)); u64 q=ld_rlx_sys(host+16+(x&z)); x=(p+q)&z;})
  (void)sink;
  *count = k;
}
int main(){
  u64 *dev, *host, *hostd, *out; int *cnt; char *nb;
  cudaMalloc(&dev, 8192*8); cudaMemset(dev, 0, 8192*8);
  cudaHostAlloc(&host, 4096, cudaHostAllocMapped); for(int i=0;i<512;++i) host[i]=0;
  cudaHostGetDevicePointer(&hostd, host, 0);
  cudaMallocManaged(&out, 64*3*8); cudaMallocManaged(&cnt, 4); cudaMallocManaged(&nb, 64*64);
  Desc d; for(int i=0;i<48;++i) d.w[i]=0;
  for (int rep=0; rep<3; ++rep) {
    probe<<<1,1>>>(dev, hostd, d, out, cnt, nb, 0ull);
    cudaError_t e = cudaDeviceSynchronize(); if (e) { printf("error %s\n", cudaGetErrorString(e)); return 1; }
    printf("rep %d\n", rep);
    for (int i=0;i<*cnt;++i) printf("  %-55s %8.1f ns %8.1f cycles\n", nb+i*64, (double)out[i*3]/N, (double)out[i*3+1]/N);
  }
  return 0;
}
