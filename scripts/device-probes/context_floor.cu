// What creating a context costs before any gpuprims code runs: cuInit, the primary context,
// making it current, a non-blocking stream — each timed in a fresh process, as Gpu::new pays
// them (Gpu::new adds only a few device-attribute queries).
#include <cstdio>
#include <chrono>
#include <cuda.h>
#define CK(x) do{CUresult e=(x); if(e){const char* s; cuGetErrorString(e,&s); printf("err %s line %d\n",s,__LINE__); return 1;}}while(0)
int main(){
  using clk = std::chrono::steady_clock;
  auto ms = [](clk::time_point a, clk::time_point b){ return std::chrono::duration<double, std::milli>(b - a).count(); };
  auto t0 = clk::now(); CK(cuInit(0));
  auto t1 = clk::now(); CUdevice d; CK(cuDeviceGet(&d, 0)); CUcontext c; CK(cuDevicePrimaryCtxRetain(&c, d));
  auto t2 = clk::now(); CK(cuCtxSetCurrent(c));
  auto t3 = clk::now(); CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  auto t4 = clk::now();
  printf("cuInit %.1f ms, cuDevicePrimaryCtxRetain %.1f ms, cuCtxSetCurrent %.1f ms, cuStreamCreate %.1f ms; total %.1f ms\n",
         ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, t4), ms(t0, t4));
}
