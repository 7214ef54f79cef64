// The bench's ping-pong floor with a pause of D ns between the device's store and its
// first poll, D cycling (500 rounds each, 20 cycles), interleaved: median per D.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
typedef unsigned long long u64;
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s: %s\n",#x,cudaGetErrorString(e)); exit(1);} }while(0)
__device__ __forceinline__ u64 now(){u64 t; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t)); return t;}
__device__ __forceinline__ u64 lda(const u64*p){u64 v; asm volatile("ld.acquire.sys.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ void str(u64*p,u64 v){asm volatile("st.release.sys.global.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
#define ND 10
__constant__ unsigned Ds[ND]={0,100,200,300,400,500,600,800,1000,1400};
__global__ void pp(u64*ping,u64*pong,int per,int cycles,unsigned*dur,int*fail){
  u64 i=0;
  for(int c=0;c<cycles;c++) for(int k=0;k<ND;k++) for(int j=0;j<per;j++){
    i++; u64 t0=now();
    str(ping,i);
    u64 until=t0+Ds[k]; while(now()<until){}
    u64 dl=now()+1000000000ull;
    while(lda(pong)!=i){ if(now()>dl){*fail=1;return;} }
    dur[(k*cycles+c)*per+j]=(unsigned)(now()-t0);
  }
}
int main(){
  const int per=500,cycles=20; const u64 rounds=(u64)per*cycles*ND;
  CK(cudaSetDeviceFlags(cudaDeviceMapHost));
  unsigned*dur; int*fail; CK(cudaMallocManaged(&dur,rounds*4)); CK(cudaMallocManaged(&fail,4));
  for(int alloc=0;alloc<3;alloc++){
    u64*h; CK(cudaHostAlloc(&h,8192,cudaHostAllocMapped)); memset(h,0,8192);
    u64*d; CK(cudaHostGetDevicePointer(&d,h,0));
    for(int layout=0;layout<2;layout++){
      u64*hping=h+layout*512,*hpong=hping+(layout?16:8); // layout 0: pong at +64 (the bench's), 1: +128
      memset(hping,0,4096);
      std::thread host([&]{ volatile u64*vp=hping; volatile u64*vq=hpong;
        for(u64 i=1;i<=rounds;i++){ u64 spins=0; while(vp[0]!=i){ if(++spins>2000000000ull) return; } vq[0]=i; } });
      *fail=0;
      pp<<<1,1>>>(d+layout*512,d+layout*512+(layout?16:8),per,cycles,dur,fail);
      CK(cudaDeviceSynchronize()); host.join();
      printf("alloc %d pong +%d B:",alloc,layout?128:64);
      for(int k=0;k<ND;k++){ std::vector<unsigned> v(dur+(u64)k*cycles*per,dur+(u64)(k+1)*cycles*per); std::sort(v.begin(),v.end());
        printf("  D%u %.2f", (unsigned[]){0,100,200,300,400,500,600,800,1000,1400}[k], v[v.size()/2]/1e3); }
      printf("%s\n",*fail?" FAIL":""); fflush(stdout);
    }
    CK(cudaFreeHost(h));
  }
}
