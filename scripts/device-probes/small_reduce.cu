// Feasibility probes for issue 11 (not product code): floors for small reductions and the
// 10M x 5 f64 filter's bytes.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("err %s line %d\n",cudaGetErrorString(e),__LINE__); exit(1);}}while(0)

__global__ void hold(uint64_t ns){ uint64_t t0; asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t0)); uint64_t t; do{asm volatile("mov.u64 %0, %%globaltimer;":"=l"(t));}while(t-t0<ns);}
__global__ void empty(){}

struct U128{unsigned long long lo,hi;};
__device__ __forceinline__ U128 add(U128 a,U128 b){U128 r; r.lo=a.lo+b.lo; r.hi=a.hi+b.hi+(r.lo<a.lo); return r;}
__device__ __forceinline__ U128 shfl(U128 v,int d){U128 r; r.lo=__shfl_down_sync(~0u,v.lo,d); r.hi=__shfl_down_sync(~0u,v.hi,d); return r;}
__device__ __forceinline__ U128 wred(U128 v){for(int d=16;d;d>>=1) v=add(v,shfl(v,d)); return v;}
template<int U> __device__ __forceinline__ unsigned long long loadsq(const int4* x, long n4){
  long i=(long)blockIdx.x*blockDim.x*U+threadIdx.x; unsigned long long s=0; int4 v[U];
  #pragma unroll
  for(int u=0;u<U;u++) v[u]= (i+u*blockDim.x<n4)? __ldg(x+i+u*blockDim.x): make_int4(0,0,0,0);
  #pragma unroll
  for(int u=0;u<U;u++){ s+=(long long)v[u].x*v[u].x; s+=(long long)v[u].y*v[u].y; s+=(long long)v[u].z*v[u].z; s+=(long long)v[u].w*v[u].w;}
  return s; // at most 16 squares < 2^66? each < 2^62, 16 of them < 2^66: use for probing only
}
__device__ __forceinline__ U128 block_red(U128 v, U128* sm){ v=wred(v); int w=threadIdx.x>>5,l=threadIdx.x&31; if(!l) sm[w]=v; __syncthreads(); U128 z={0,0}; if(w==0){ v = l<(blockDim.x>>5)? sm[l]:z; v=wred(v);} return v;}

// A: ticket, last block's warp 0 reduces partials (grid <= 1024)
template<int U> __global__ void red_ticket(const int4* x,long n4,U128* part,unsigned* ctr,U128* out){
  __shared__ U128 sm[32]; __shared__ unsigned last;
  U128 v={loadsq<U>(x,n4),0}; v=block_red(v,sm);
  if(threadIdx.x==0){ part[blockIdx.x]=v; unsigned t; asm volatile("atom.acq_rel.gpu.global.add.u32 %0,[%1],1;":"=r"(t):"l"(ctr):"memory"); last=(t==gridDim.x-1);}
  __syncthreads(); if(!last) return;
  if(threadIdx.x<32){ U128 s={0,0}; for(int j=threadIdx.x;j<gridDim.x;j+=32){ U128 p; p.lo=((volatile unsigned long long*)&part[j].lo)[0]; p.hi=((volatile unsigned long long*)&part[j].hi)[0]; s=add(s,p);} s=wred(s); if(threadIdx.x==0){*out=s; *ctr=0;}}
}
// B: 64-bit atomics with carry into acc[par], block 0 zeroes acc[par^1]
template<int U> __global__ void red_atomic(const int4* x,long n4,U128* acc,int par){
  __shared__ U128 sm[32];
  U128 v={loadsq<U>(x,n4),0}; v=block_red(v,sm);
  if(threadIdx.x==0){ if(blockIdx.x==0){acc[par^1].lo=0; acc[par^1].hi=0;}
    unsigned long long old=atomicAdd(&acc[par].lo,v.lo); unsigned long long c=(old+v.lo<old); atomicAdd(&acc[par].hi,v.hi+c);}
}
// C: fire-and-forget limbs (red, no return)
template<int U> __global__ void red_limbs(const int4* x,long n4,unsigned long long* acc,int par){
  __shared__ U128 sm[32];
  U128 v={loadsq<U>(x,n4),0}; v=block_red(v,sm);
  if(threadIdx.x==0){ unsigned long long* a=acc+3*par; if(blockIdx.x==0){unsigned long long* b=acc+3*(par^1); b[0]=b[1]=b[2]=0;}
    atomicAdd(a,v.lo&0xffffffffull); atomicAdd(a+1,v.lo>>32); atomicAdd(a+2,v.hi);}
}
// D: loads + block reduce, one plain store per block (no combine)
template<int U> __global__ void red_partials(const int4* x,long n4,U128* part){
  __shared__ U128 sm[32]; U128 v={loadsq<U>(x,n4),0}; v=block_red(v,sm); if(threadIdx.x==0) part[blockIdx.x]=v;}

__global__ void fir5(const double* x,double* y,long n){ long i=(long)blockIdx.x*blockDim.x+threadIdx.x; if(i>=n) return; double s=0;
  #pragma unroll
  for(int k=-2;k<=2;k++){ long j=i+k; s+= (j>=0&&j<n)? __ldg(x+j):0.0;} y[i]=s*0.2;}

cudaEvent_t e0,e1;
template<class F> float timeit(F f,int runs=300){ std::vector<float> v; for(int r=0;r<runs+20;r++){ hold<<<1,1>>>(20000); cudaEventRecord(e0); f(r); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms,e0,e1); if(r>=20) v.push_back(ms*1000);} CK(cudaGetLastError()); std::sort(v.begin(),v.end()); return v[v.size()/2];}

int main(){
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const int NB=64; long maxn=1<<20; std::vector<int*> bufs(NB);
  std::vector<int> h(maxn); for(long i=0;i<maxn;i++) h[i]=(int)((i*2654435761u)>>3)-(1<<27);
  for(auto&b:bufs){CK(cudaMalloc(&b,maxn*4)); CK(cudaMemcpy(b,h.data(),maxn*4,cudaMemcpyHostToDevice));}
  U128 *part,*acc,*out; unsigned* ctr; unsigned long long* limbs;
  CK(cudaMalloc(&part,4096*16)); CK(cudaMalloc(&acc,32)); CK(cudaMalloc(&out,16)); CK(cudaMalloc(&ctr,4)); CK(cudaMalloc(&limbs,48));
  CK(cudaMemset(acc,0,32)); CK(cudaMemset(ctr,0,4)); CK(cudaMemset(limbs,0,48));
  printf("empty kernel: %.2f us\n", timeit([&](int){empty<<<1,32>>>();}));
  for(long n : {1L<<16, 1L<<20}){
    long n4=n/4;
    for(int th : {256,512,1024}){
     #define RUN(U) { int grid=(int)((n4+th*U-1)/(th*U)); \
      float a=timeit([&](int r){red_ticket<U><<<grid,th>>>((int4*)bufs[r%NB],n4,part,ctr,out);}); \
      int p=0; float b=timeit([&](int r){red_atomic<U><<<grid,th>>>((int4*)bufs[r%NB],n4,acc,p); p^=1;}); \
      int q=0; float c=timeit([&](int r){red_limbs<U><<<grid,th>>>((int4*)bufs[r%NB],n4,limbs,q); q^=1;}); \
      float d=timeit([&](int r){red_partials<U><<<grid,th>>>((int4*)bufs[r%NB],n4,part);}); \
      float e=timeit([&](int r){red_ticket<U><<<grid,th>>>((int4*)bufs[0],n4,part,ctr,out);}); \
      printf("n=2^%d block %4d U=%d grid %4d: ticket %.2f  atomic-carry %.2f  limbs %.2f  partials-only %.2f  | ticket same-buffer(L2) %.2f\n", n==(1<<16)?16:20, th, U, grid, a,b,c,d,e); }
      RUN(1) RUN(2) RUN(4)
    }
  }
  // copies for the 10M x 5 f64 filter: 80 MB in, 80 MB out
  long n=10000000; double *x,*y; CK(cudaMalloc(&x,n*8*4)); CK(cudaMalloc(&y,n*8*4)); CK(cudaMemset(x,1,n*8*4));
  float cp=timeit([&](int r){cudaMemcpyAsync(y+(r%4)*n,x+(r%4)*n,n*8,cudaMemcpyDeviceToDevice);});
  float f=timeit([&](int r){fir5<<<(n+255)/256,256>>>(x+(r%4)*n,y+(r%4)*n,n);});
  size_t big=1<<30; char *bx,*by; CK(cudaMalloc(&bx,big)); CK(cudaMalloc(&by,big)); CK(cudaMemset(bx,1,big));
  float cb=timeit([&](int){cudaMemcpyAsync(by,bx,big,cudaMemcpyDeviceToDevice);},30);
  printf("copy 1 GiB: %.2f us = %.1f GB/s\n", cb, 2.0*big/cb/1e3);
  printf("memcpy d2d 80 MB (10M f64): %.2f us (= %.1f GB/s r+w); at 1GiB-copy rate: %.2f us\n", cp, 2.0*n*8/cp/1e3, 2.0*n*8/(2.0*big/cb));
  printf("naive fir5 f64 10M: %.2f us\n", f);
}
