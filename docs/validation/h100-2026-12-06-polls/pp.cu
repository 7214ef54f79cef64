// Ping-pong through mapped host memory: does keeping several polls in flight
// shorten the device's wait for the host's answer?
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <atomic>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
typedef unsigned long long u64;
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s: %s\n",#x,cudaGetErrorString(e)); exit(1);} }while(0)
__device__ __forceinline__ u64 now(){u64 t; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t)); return t;}
__device__ __forceinline__ u64 ldr(const u64*p){u64 v; asm volatile("ld.relaxed.sys.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ u64 lda(const u64*p){u64 v; asm volatile("ld.acquire.sys.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ u64 ldv(const u64*p){u64 v; asm volatile("ld.volatile.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory"); return v;}
__device__ __forceinline__ void str(u64*p,u64 v){asm volatile("st.release.sys.global.u64 [%0],%1;"::"l"(p),"l"(v):"memory");}
__device__ __forceinline__ void spin_ns(unsigned ns){ if(!ns) return; u64 t=now()+ns; while(now()<t){} }
__device__ __forceinline__ void fence(){asm volatile("fence.acq_rel.sys;":::"memory");}
// mode 0: acquire loads one at a time; 1: relaxed one at a time; 2: K relaxed in flight;
// 3: K volatile in flight. addresses: pong + k*step (u64 units)
template<int K>
__global__ void pp(u64*ping,u64*pong,int step,u64 rounds,unsigned stagger,int mode,unsigned*dur,int*fail){
  u64 t0=now();
  for(u64 i=1;i<=rounds;i++){
    str(ping,i);
    u64 dl=now()+1000000000ull;
    if(mode==0){ while(lda(pong)!=i){ if(now()>dl){*fail=1;return;} } }
    else if(mode==1){ while(ldr(pong)!=i){ if(now()>dl){*fail=1;return;} } fence(); }
    else {
      u64 v[K];
      #pragma unroll
      for(int k=0;k<K;k++){ v[k]= mode==2? ldr(pong+k*step): ldv(pong+k*step); if(k+1<K) spin_ns(stagger);} 
      bool done=false;
      while(!done){
        #pragma unroll
        for(int k=0;k<K;k++){ if(v[k]==i){done=true;break;} v[k]= mode==2? ldr(pong+k*step): ldv(pong+k*step);} 
        if(now()>dl){*fail=1;return;}
      }
      fence();
    }
    u64 t1=now(); dur[i-1]=(unsigned)(t1-t0); t0=t1;
  }
}
struct Cfg{int K,mode,step; unsigned stagger; const char*name;};
int main(int argc,char**argv){
  int pages = 4; u64 rounds=20000;
  CK(cudaSetDeviceFlags(cudaDeviceMapHost));
  unsigned*dur; int*fail; CK(cudaMallocManaged(&dur,rounds*4)); CK(cudaMallocManaged(&fail,4));
  std::vector<Cfg> cfgs={
    {1,0,0,0,"acquire, one at a time (the floor's loop)"},
    {1,1,0,0,"relaxed, one at a time"},
    {2,2,0,0,"2 relaxed in flight, same word, no stagger"},
    {2,2,0,400,"2 relaxed in flight, same word, 400 ns apart"},
    {2,2,4,400,"2 relaxed in flight, 2 sectors of one line, 400 ns apart"},
    {2,2,16,400,"2 relaxed in flight, 2 lines, 400 ns apart"},
    {3,2,16,300,"3 relaxed in flight, 3 lines, 300 ns apart"},
    {4,2,16,250,"4 relaxed in flight, 4 lines, 250 ns apart"},
    {4,2,16,150,"4 relaxed in flight, 4 lines, 150 ns apart"},
    {4,2,4,250,"4 relaxed in flight, 4 sectors of one line, 250 ns apart"},
    {4,3,16,250,"4 volatile in flight, 4 lines, 250 ns apart"},
    {8,2,16,120,"8 relaxed in flight, 8 lines, 120 ns apart"},
  };
  for(int alloc=0;alloc<2;alloc++){
    u64*h; CK(cudaHostAlloc(&h,pages*4096+4096,cudaHostAllocMapped)); memset(h,0,pages*4096+4096);
    u64*d; CK(cudaHostGetDevicePointer(&d,h,0));
    for(int pg=0;pg<pages;pg++){
      for(auto&c:cfgs){
        if(pg>0 && c.mode!=0 && !(c.K==4&&c.mode==2&&c.step==16&&c.stagger==250)) continue;
        u64*hping=h+pg*512, *hpong=hping+16; // ping at +0, pongs from +128 B
        memset(hping,0,4096);
        std::atomic<bool> stop{false};
        int K=c.K, step=c.step;
        std::thread host([&]{
          volatile u64*vp=hping; volatile u64*vq=hpong;
          for(u64 i=1;i<=rounds;i++){
            while(vp[0]!=i){ if(stop.load(std::memory_order_relaxed)) return; }
            for(int k=0;k<(K>1&&step?K:1);k++) vq[k*step]=i;
          }
        });
        *fail=0;
        u64*dping=d+pg*512,*dpong=dping+16;
        switch(c.K){
          case 1: pp<1><<<1,1>>>(dping,dpong,c.step,rounds,c.stagger,c.mode,dur,fail);break;
          case 2: pp<2><<<1,1>>>(dping,dpong,c.step,rounds,c.stagger,c.mode,dur,fail);break;
          case 3: pp<3><<<1,1>>>(dping,dpong,c.step,rounds,c.stagger,c.mode,dur,fail);break;
          case 4: pp<4><<<1,1>>>(dping,dpong,c.step,rounds,c.stagger,c.mode,dur,fail);break;
          case 8: pp<8><<<1,1>>>(dping,dpong,c.step,rounds,c.stagger,c.mode,dur,fail);break;
        }
        CK(cudaDeviceSynchronize()); stop=true; host.join();
        std::vector<unsigned> v(dur+100,dur+rounds); std::sort(v.begin(),v.end());
        printf("alloc %d page %d  %-60s p10 %.2f p50 %.2f p90 %.2f us%s\n",alloc,pg,c.name,v[v.size()/10]/1e3,v[v.size()/2]/1e3,v[v.size()*9/10]/1e3,*fail?" FAIL":"");
        fflush(stdout);
      }
    }
    CK(cudaFreeHost(h));
  }
  return 0;
}
