// How long does the driver take to load (JIT) the gpuprims PTX on a cold cache, and does the
// module or the stream kind change the empty-kernel floor? Put the embedded PTX beside it as k.ptx.
// (H100, driver 580, 2026-11-23: 79.7 s for 13.8 MB; every floor 3.07-3.10 us.)
#include <cstdio>
#include <cstdint>
#include <vector>
#include <string>
#include <fstream>
#include <sstream>
#include <chrono>
#include <algorithm>
#include <cuda.h>
#define CK(x) do{CUresult e=(x); if(e){const char* s; cuGetErrorString(e,&s); printf("err %s line %d\n",s,__LINE__); exit(1);}}while(0)
int main(){
  CK(cuInit(0)); CUdevice d; CK(cuDeviceGet(&d,0)); CUcontext c; CK(cuDevicePrimaryCtxRetain(&c,d)); CK(cuCtxSetCurrent(c));
  std::string sp = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry e(){ret;}\n.visible .entry h(.param .u64 ns){.reg .b64 a,t0,t; .reg .pred p; ld.param.u64 a,[ns]; mov.u64 t0,%globaltimer; L: mov.u64 t,%globaltimer; sub.u64 t,t,t0; setp.lt.u64 p,t,a; @p bra L; ret;}\n";
  CUmodule ms; CK(cuModuleLoadData(&ms, sp.c_str())); CUfunction fe, fh; CK(cuModuleGetFunction(&fe,ms,"e")); CK(cuModuleGetFunction(&fh,ms,"h"));
  std::ifstream f("k.ptx"); std::stringstream ss; ss<<f.rdbuf(); std::string big=ss.str();
  auto t0=std::chrono::steady_clock::now();
  CUmodule mb; CK(cuModuleLoadData(&mb, big.c_str()));
  double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
  printf("cuModuleLoadData of the gpuprims PTX (%zu bytes): %.1f s\n", big.size(), load_s);
  CUfunction be, bh; CK(cuModuleGetFunction(&be,mb,"gpuprims_probe_empty")); CK(cuModuleGetFunction(&bh,mb,"gpuprims_probe_hold"));
  CUstream legacy=0, nb; CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
  CUevent e0,e1; CK(cuEventCreate(&e0,0)); CK(cuEventCreate(&e1,0));
  auto timeit=[&](CUfunction k, CUfunction hold, CUstream s, bool newevents){ std::vector<float> v; for(int r=0;r<320;r++){ uint64_t ns=20000; void* hp[]={&ns};
      CUevent a=e0,b=e1; if(newevents){CK(cuEventCreate(&a,0)); CK(cuEventCreate(&b,0));}
      CK(cuLaunchKernel(hold,1,1,1,1,1,1,0,s,hp,0)); CK(cuEventRecord(a,s)); CK(cuLaunchKernel(k,1,1,1,1,1,1,0,s,0,0)); CK(cuEventRecord(b,s)); CK(cuEventSynchronize(b));
      float ms; CK(cuEventElapsedTime(&ms,a,b)); if(r>=20) v.push_back(ms*1000); if(newevents){cuEventDestroy(a); cuEventDestroy(b);} }
    std::sort(v.begin(),v.end()); return v[v.size()/2]; };
  printf("small module empty, legacy stream: %.2f us\n", timeit(fe,fh,legacy,false));
  printf("small module empty, non-blocking stream: %.2f us\n", timeit(fe,fh,nb,false));
  printf("gpuprims empty, legacy stream: %.2f us\n", timeit(be,bh,legacy,false));
  printf("gpuprims empty, non-blocking stream: %.2f us\n", timeit(be,bh,nb,false));
  printf("gpuprims empty, nb stream, new events each run: %.2f us\n", timeit(be,bh,nb,true));
}
