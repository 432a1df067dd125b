// Does queuing every timed run before one final sync change an empty kernel's event time?
// (H100, 2026-11-23: 3.14 us with a sync per run, 3.87 us with all runs queued.)
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
__global__ void hold(uint64_t ns){ uint64_t t0; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t0)); uint64_t t; do{asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t));}while(t-t0<ns);}
__global__ void empty(){}
int main(){
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for(uint64_t holdns : {20000ull, 50000ull, 200000ull}){
    for(int queued=0; queued<2; queued++){
      int runs=200; std::vector<cudaEvent_t> a(runs), b(runs); std::vector<float> v;
      for(int r=0;r<runs;r++){ cudaEventCreate(&a[r]); cudaEventCreate(&b[r]); hold<<<1,1,0,s>>>(holdns); cudaEventRecord(a[r],s); empty<<<1,1,0,s>>>(); cudaEventRecord(b[r],s); if(!queued) cudaEventSynchronize(b[r]); }
      cudaStreamSynchronize(s);
      for(int r=0;r<runs;r++){ float ms; cudaEventElapsedTime(&ms,a[r],b[r]); v.push_back(ms*1000);} std::sort(v.begin(),v.end());
      printf("hold %6llu ns, %s: median %.2f us (min %.2f)\n",(unsigned long long)holdns, queued?"all runs queued, one sync":"sync per run", v[runs/2], v[0]);
    }
  }
}
