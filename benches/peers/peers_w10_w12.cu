// peers_w10_w12.cu - CUDA C and NPP rows for the workloads ../shared/peers/peers.cu leaves to
// PyTorch and CuPy: W10 (3 x 3 stride-2 padding-1 pooling, f32 NCHW), W11 (window-15 row sum and
// sum of squares of an i32 image) and W12 (64 u8 images of 512^2 through Gaussian 3 x 3 ->
// dilation 3 x 3 -> Sobel along x).
//
// It reuses peers.cu's harness (bench(): sentinel-filled outputs, a CPU check before timing, 3
// warm-ups, median of 30 cudaEvent-timed runs; GB/s = input bytes read once + output bytes written
// once) by including it, so the two programs time and report alike:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I<dir of peers.cu> peers_w10_w12.cu -o peers_w10_w12 \
//        -lnppif -lnppim -lnppial -lnppist -lnpps -lnppc
//   ./peers_w10_w12 [W0] [W4] [W10] [W11] [W12]
// (`scripts/peers-extra.sh` does both.) Output: peers.cu's CSV.

#define main peers_cu_main
#include "peers.cu"
#undef main

// gpuprims' benches poison the output before every timed run (METHOD.md), so its dirty lines
// sit in L2 when the kernel starts; peers.cu poisons once before its check. A `_poisoned` row
// times a peer under gpuprims' protocol: prep (the poison) before every run, outside the events.
static double median_us_poisoned(const std::function<void()>& prep, const std::function<void()>& fn) {
  for (int i = 0; i < kWarmup; ++i) {
    prep();
    fn();
  }
  CUDA_CHECK(cudaStreamSynchronize(g_stream));
  for (int i = 0; i < kRuns; ++i) {
    prep();
    CUDA_CHECK(cudaEventRecord(g_ev[2 * i], g_stream));
    fn();
    CUDA_CHECK(cudaEventRecord(g_ev[2 * i + 1], g_stream));
  }
  CUDA_CHECK(cudaEventSynchronize(g_ev[2 * kRuns - 1]));
  std::vector<double> t(kRuns);
  for (int i = 0; i < kRuns; ++i) {
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, g_ev[2 * i], g_ev[2 * i + 1]));
    t[i] = 1000.0 * ms;
  }
  std::sort(t.begin(), t.end());
  return 0.5 * (t[kRuns / 2 - 1] + t[kRuns / 2]);
}

// Both protocols for one peer: peers.cu's bench (checked), then the poisoned timing.
static void bench_both(const std::string& op, const std::string& impl, const std::string& shape,
                       const std::string& dtype, double bytes, const std::function<void()>& prep,
                       const std::function<void()>& run, const std::function<VerifyResult()>& verify) {
  const size_t failures = g_failures.size();
  bench(op, impl, shape, dtype, bytes, prep, run, verify);
  if (g_failures.size() == failures) emit(op, impl + "_poisoned", shape, dtype, median_us_poisoned(prep, run), bytes, 0);
}

// ====================================================================================
// W4 under both protocols: peers.cu's float4 kernel, 2 x 2 max pooling of (64, 64, 224, 224)
// ====================================================================================
static void w4_float4_poisoned() {
  const int H = 224, W = 224, Ho = H / 2, Wo = W / 2;
  const long long nin = 64LL * 64 * H * W, nout = 64LL * 64 * Ho * Wo;
  HostBuf<float> h(nin), ref(nout);
  SplitMix64 r(0x5EED0004ull + (uint64_t)nin);
  for (long long i = 0; i < nin; ++i) h[i] = (float)((double)(r.next() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  for (long long o = 0; o < nout; ++o) {
    const long long pl = o / (Ho * Wo), yo = o / Wo % Ho, xo = o % Wo;
    const float* p = h.data() + (pl * H + 2 * yo) * W + 2 * xo;
    ref[o] = std::max(std::max(p[0], p[1]), std::max(p[W], p[W + 1]));
  }
  DevBuf<float> in(nin), out(nout);
  in.upload(h.data());
  bench_both("W4_maxpool2x2", "ldg_float4_2out_per_thread", "64x64x224x224", "float32", 4.0 * (nin + nout),
             [&] { out.poison(0xFF); },
             [&] {
               maxpool2_ldg_vec4<<<(unsigned)((nout / 2 + 255) / 256), 256, 0, g_stream>>>(in.p, out.p, H, W, nout / 2);
               KERNEL_CHECK();
             },
             [&]() -> VerifyResult {
               HostBuf<float> g = out.download();
               Cmp c = compare_rect(g.data(), ref.data(), (int)nout, 0, 0, (int)nout, 1, 0.0);
               return {c.max_err, c.max_err == 0.0, ""};
             });
}

// ====================================================================================
// W10: 3x3 stride-2 padding-1 pooling, float32 NCHW (64, 64, 224, 224) -> (64, 64, 112, 112)
// ====================================================================================
// PyTorch's semantics: max takes `v > max || isnan(v)` (first of equal maxima, a NaN wins) and
// returns the flat in-plane index; the average (count_include_pad) sums the in-plane taps
// row-major in float and divides by the window's extent clipped to the padded plane.
enum class Pool { Max, MaxIdx, Avg };

struct PoolAcc {
  float v;
  int i;
};

__device__ __forceinline__ void pool_take(PoolAcc& a, float v, int i, bool avg) {
  if (avg) {
    a.v += v;
  } else if (v > a.v || isnan(v)) {
    a.v = v;
    a.i = i;
  }
}

// One output per thread, every tap an __ldg: the plain CUDA C kernel.
template <Pool OP>
__global__ void pool3s2p1_1out(const float* __restrict__ in, float* __restrict__ out, long long* __restrict__ idx,
                               int H, int W, int Ho, int Wo, long long total) {
  const long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= total) return;
  const int xo = (int)(o % Wo);
  const long long t = o / Wo;
  const int yo = (int)(t % Ho);
  const float* p = in + (t / Ho) * (long long)H * W;
  const bool avg = OP == Pool::Avg;
  const int y0 = 2 * yo - 1, x0 = 2 * xo - 1;
  PoolAcc a{avg ? 0.f : -INFINITY, max(y0, 0) * W + max(x0, 0)};
  for (int y = max(y0, 0); y < min(y0 + 3, H); ++y)
    for (int x = max(x0, 0); x < min(x0 + 3, W); ++x) pool_take(a, __ldg(p + y * W + x), y * W + x, avg);
  if (avg) a.v /= (float)((min(y0 + 3, H + 1) - y0) * (min(x0 + 3, W + 1) - x0));
  out[o] = a.v;
  if (OP == Pool::MaxIdx) idx[o] = a.i;
}

// Two outputs per thread (W % 4 == 0): per window row one float4 __ldg plus the element before it,
// one float2 store - the layout the CUDA C 2 x 2 kernel of W4 uses.
template <Pool OP>
__global__ void pool3s2p1_vec4(const float* __restrict__ in, float* __restrict__ out, long long* __restrict__ idx,
                               int H, int W, int Ho, int Wo, long long total_pairs) {
  const long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= total_pairs) return;
  const int Wq = Wo / 2;
  const int xq = (int)(q % Wq);
  const long long t = q / Wq;
  const int yo = (int)(t % Ho);
  const float* p = in + (t / Ho) * (long long)H * W;
  const bool avg = OP == Pool::Avg;
  const int y0 = 2 * yo - 1, c = 4 * xq;
  PoolAcc a{avg ? 0.f : -INFINITY, max(y0, 0) * W + max(c - 1, 0)};
  PoolAcc b{avg ? 0.f : -INFINITY, max(y0, 0) * W + c + 1};
  for (int y = max(y0, 0); y < min(y0 + 3, H); ++y) {
    const float* r = p + y * W + c;
    const float4 v = __ldg(reinterpret_cast<const float4*>(r));
    const int i = y * W + c;
    if (c > 0) pool_take(a, __ldg(r - 1), i - 1, avg);
    pool_take(a, v.x, i, avg);
    pool_take(a, v.y, i + 1, avg);
    pool_take(b, v.y, i + 1, avg);
    pool_take(b, v.z, i + 2, avg);
    pool_take(b, v.w, i + 3, avg);
  }
  if (avg) {
    const float rows = (float)(min(y0 + 3, H + 1) - y0);
    a.v /= rows * 3.f;
    b.v /= rows * (float)(min(c + 4, W + 1) - (c + 1));
  }
  const long long o = t * Wo + 2 * xq;
  *reinterpret_cast<float2*>(out + o) = make_float2(a.v, b.v);
  if (OP == Pool::MaxIdx) {
    idx[o] = a.i;
    idx[o + 1] = b.i;
  }
}

static void w10_pool() {
  const int N = 64, C = 64, H = 224, W = 224, Ho = (H + 2 - 3) / 2 + 1, Wo = (W + 2 - 3) / 2 + 1;
  const long long planes = (long long)N * C, nin = planes * H * W, nout = planes * Ho * Wo;
  HostBuf<float> h(nin), rmax(nout), ravg(nout);
  HostBuf<long long> ridx(nout);
  SplitMix64 r(0x5EED0010ull);
  for (long long i = 0; i < nin; ++i) h[i] = (float)((double)(r.next() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  for (long long pl = 0; pl < planes; ++pl)
    for (int yo = 0; yo < Ho; ++yo)
      for (int xo = 0; xo < Wo; ++xo) {
        const float* p = h.data() + pl * H * W;
        const int y0 = 2 * yo - 1, x0 = 2 * xo - 1;
        float m = -INFINITY, s = 0.f;
        int mi = std::max(y0, 0) * W + std::max(x0, 0);
        for (int y = std::max(y0, 0); y < std::min(y0 + 3, H); ++y)
          for (int x = std::max(x0, 0); x < std::min(x0 + 3, W); ++x) {
            const float v = p[y * W + x];
            s += v;
            if (v > m || std::isnan(v)) m = v, mi = y * W + x;
          }
        const long long o = (pl * Ho + yo) * Wo + xo;
        rmax[o] = m;
        ridx[o] = mi;
        ravg[o] = s / (float)((std::min(y0 + 3, H + 1) - y0) * (std::min(x0 + 3, W + 1) - x0));
      }
  DevBuf<float> in(nin), out(nout);
  DevBuf<long long> idx(nout);
  in.upload(h.data());
  const std::string shape = std::to_string(N) + "x" + std::to_string(C) + "x" + std::to_string(H) + "x" +
                            std::to_string(W);
  auto check = [&](const HostBuf<float>& ref, bool with_idx) {
    return [&, with_idx]() -> VerifyResult {
      HostBuf<float> g = out.download();
      Cmp c = compare_rect(g.data(), ref.data(), (int)nout, 0, 0, (int)nout, 1, 0.0);
      size_t bad_idx = 0;
      if (with_idx) {
        HostBuf<long long> gi = idx.download();
        for (long long i = 0; i < nout; ++i) bad_idx += gi[i] != ridx[i];
      }
      return {c.max_err, c.max_err == 0.0 && bad_idx == 0, with_idx ? std::to_string(bad_idx) + " indices differ" : ""};
    };
  };
  auto prep = [&] {
    out.poison(0xFF);
    idx.poison(0xFF);
  };
  const double bytes = 4.0 * (nin + nout), bytes_idx = bytes + 8.0 * nout;
  const int T = 256;
  const unsigned g1 = (unsigned)((nout + T - 1) / T), g2 = (unsigned)((nout / 2 + T - 1) / T);
  auto run = [&](const char* op, const char* impl, double b, const HostBuf<float>& ref, bool with_idx, auto launch) {
    bench_both(op, impl, shape, "float32", b, prep,
          [&] {
            launch();
            KERNEL_CHECK();
          },
          check(ref, with_idx));
  };
  run("W10_maxpool3x3s2p1", "cuda_c_1out_ldg", bytes, rmax, false, [&] {
    pool3s2p1_1out<Pool::Max><<<g1, T, 0, g_stream>>>(in.p, out.p, idx.p, H, W, Ho, Wo, nout);
  });
  run("W10_maxpool3x3s2p1", "cuda_c_float4_2out_per_thread", bytes, rmax, false, [&] {
    pool3s2p1_vec4<Pool::Max><<<g2, T, 0, g_stream>>>(in.p, out.p, idx.p, H, W, Ho, Wo, nout / 2);
  });
  run("W10_maxpool3x3s2p1_indices", "cuda_c_1out_ldg", bytes_idx, rmax, true, [&] {
    pool3s2p1_1out<Pool::MaxIdx><<<g1, T, 0, g_stream>>>(in.p, out.p, idx.p, H, W, Ho, Wo, nout);
  });
  run("W10_maxpool3x3s2p1_indices", "cuda_c_float4_2out_per_thread", bytes_idx, rmax, true, [&] {
    pool3s2p1_vec4<Pool::MaxIdx><<<g2, T, 0, g_stream>>>(in.p, out.p, idx.p, H, W, Ho, Wo, nout / 2);
  });
  run("W10_avgpool3x3s2p1", "cuda_c_1out_ldg", bytes, ravg, false, [&] {
    pool3s2p1_1out<Pool::Avg><<<g1, T, 0, g_stream>>>(in.p, out.p, idx.p, H, W, Ho, Wo, nout);
  });
  run("W10_avgpool3x3s2p1", "cuda_c_float4_2out_per_thread", bytes, ravg, false, [&] {
    pool3s2p1_vec4<Pool::Avg><<<g2, T, 0, g_stream>>>(in.p, out.p, idx.p, H, W, Ho, Wo, nout / 2);
  });
}

// ====================================================================================
// W11: window-15 (centred, zero border) row sum and sum of squares of an int32 8192^2 image -> 2x f32
// ====================================================================================
// Exact sums in 64 bits (a sum of squares of 15 int32 overflows 32 bits), converted once.
template <int TW>
__global__ void winsum15_i32_smem(const int* __restrict__ src, float* __restrict__ sum, float* __restrict__ sq,
                                  int W) {
  __shared__ int tile[TW + 2 * WIN_R];
  const int y = blockIdx.y, x0 = blockIdx.x * TW, t = threadIdx.x;
  const int* row = src + (size_t)y * W;
  for (int i = t; i < TW + 2 * WIN_R; i += TW) {
    const int xx = x0 - WIN_R + i;
    tile[i] = (xx >= 0 && xx < W) ? __ldg(row + xx) : 0;
  }
  __syncthreads();
  const int x = x0 + t;
  if (x >= W) return;
  long long s = 0, q = 0;
#pragma unroll
  for (int k = 0; k < 2 * WIN_R + 1; ++k) {
    const long long v = tile[t + k];
    s += v;
    q += v * v;
  }
  sum[(size_t)y * W + x] = (float)s;
  sq[(size_t)y * W + x] = (float)q;
}

static void w11_winsum_i32() {
  const int W = IMG_W, H = IMG_H;
  const size_t np = (size_t)W * H;
  HostBuf<int> h(np);
  SplitMix64 r(0x5EED0011ull);
  for (size_t i = 0; i < np; ++i) h[i] = (int)(r.next() & 4095);  // the range peers.py's W11 draws from
  HostBuf<float> rs(np), rq(np);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      long long s = 0, q = 0;
      for (int k = -WIN_R; k <= WIN_R; ++k)
        if (x + k >= 0 && x + k < W) {
          const long long v = h[(size_t)y * W + x + k];
          s += v;
          q += v * v;
        }
      rs[(size_t)y * W + x] = (float)s;
      rq[(size_t)y * W + x] = (float)q;
    }
  DevBuf<int> src(np);
  DevBuf<float> s(np), q(np);
  src.upload(h.data());
  bench("W11_winsum15_i32", "cuda_c_smem_tile_256", shape2(W, H), "int32->float32", 12.0 * np,
        [&] {
          s.poison(0xFF);
          q.poison(0xFF);
        },
        [&] {
          winsum15_i32_smem<256><<<dim3(W / 256, H), 256, 0, g_stream>>>(src.p, s.p, q.p, W);
          KERNEL_CHECK();
        },
        [&]() -> VerifyResult {
          HostBuf<float> gs = s.download(), gq = q.download();
          Cmp a = compare_rect(gs.data(), rs.data(), W, 0, 0, W, H, 0.0);
          Cmp b = compare_rect(gq.data(), rq.data(), W, 0, 0, W, H, 0.0);
          return {std::max(a.max_err, b.max_err), a.max_err == 0.0 && b.max_err == 0.0, ""};
        });
}

// ====================================================================================
// W12: 64 u8 images of 512^2 through Gaussian 3x3 [1 2 1]/16 -> dilation 3x3 -> Sobel along x
// (u8 -> i16), replicate border, with NPP: one call per op per image (bytes: each op's input read
// and output written once, 7 per pixel, as gpuprims counts its op-by-op chain) (NPP has no batched form
// of these filters), 192 calls per chain.
// ====================================================================================
// NPP's 8u Gaussian rounds its own way (W5: within 2 of round-half-up [1 2 1]/16), and the
// dilation and Sobel carry that on, so the check takes a CPU chain whose Gaussian is NPP's own
// output: the dilation and Sobel must then match exactly, and the Gaussian within 2.
static void w12_chain_npp() {
  const int N = 64, S = 512;
  const size_t plane = (size_t)S * S, np = N * plane;
  HostBuf<uint8_t> h(np);
  fill_bytes(h.data(), np, 0x5EED0012ull);
  DevBuf<uint8_t> src(np), g(np), d(np);
  DevBuf<int16_t> out(np);
  src.upload(h.data());
  float* kern = nullptr;
  CUDA_CHECK(cudaMallocManaged(&kern, 3 * sizeof(float)));
  kern[0] = 0.25f;
  kern[1] = 0.5f;
  kern[2] = 0.25f;
  CUDA_CHECK(cudaDeviceSynchronize());
  const NppiSize full{S, S};
  auto chain = [&] {
    for (int n = 0; n < N; ++n) {
      const size_t o = n * plane;
      NPP_CHECK(nppiFilterGaussAdvancedBorder_8u_C1R_Ctx(src.p + o, S, full, NppiPoint{0, 0}, g.p + o, S, full, 3,
                                                         kern, NPP_BORDER_REPLICATE, g_npp));
      NPP_CHECK(nppiDilate3x3Border_8u_C1R_Ctx(g.p + o, S, full, NppiPoint{0, 0}, d.p + o, S, full,
                                               NPP_BORDER_REPLICATE, g_npp));
      NPP_CHECK(nppiFilterSobelVertBorder_8u16s_C1R_Ctx(d.p + o, S, full, NppiPoint{0, 0}, out.p + o,
                                                        S * (int)sizeof(int16_t), full, NPP_MASK_SIZE_3_X_3,
                                                        NPP_BORDER_REPLICATE, g_npp));
    }
  };
  auto verify = [&]() -> VerifyResult {
    HostBuf<uint8_t> gg = g.download();
    HostBuf<int16_t> go = out.download();
    auto at = [&](const uint8_t* p, int y, int x) {
      return (int)p[std::clamp(y, 0, S - 1) * S + std::clamp(x, 0, S - 1)];
    };
    double gauss_err = 0, out_err = 0;
    std::vector<uint8_t> dil(plane);
    std::string sign;
    for (int n = 0; n < N; ++n) {
      const uint8_t* x = h.data() + n * plane;
      const uint8_t* gn = gg.data() + n * plane;
      for (int y = 0; y < S; ++y)
        for (int c = 0; c < S; ++c) {
          int acc = 0;
          for (int i = -1; i <= 1; ++i)
            for (int j = -1; j <= 1; ++j) acc += (2 - std::abs(i)) * (2 - std::abs(j)) * at(x, y + i, c + j);
          gauss_err = std::max(gauss_err, std::fabs((acc + 8) / 16 - (double)gn[y * S + c]));
          int m = 0;
          for (int i = -1; i <= 1; ++i)
            for (int j = -1; j <= 1; ++j) m = std::max(m, at(gn, y + i, c + j));
          dil[y * S + c] = (uint8_t)m;
        }
      // The derivative along x, [-1 0 1; -2 0 2; -1 0 1] (NPP's "Vert" filter), either sign.
      for (int y = 0; y < S; ++y)
        for (int c = 0; c < S; ++c) {
          int v = 0;
          for (int i = -1; i <= 1; ++i) v += (2 - std::abs(i)) * (at(dil.data(), y + i, c + 1) - at(dil.data(), y + i, c - 1));
          const int got = go[n * plane + y * S + c];
          out_err = std::max(out_err, (double)std::min(std::abs(got - v), std::abs(got + v)));
        }
    }
    return {out_err, gauss_err <= 2 && out_err == 0,
            "gaussian within " + std::to_string((int)gauss_err) + " of round-half-up"};
  };
  bench("W12_chain64x512", "npp_gauss_dilate_sobel_per_image_192_calls", std::to_string(N) + "x" +
        std::to_string(S) + "x" + std::to_string(S), "uint8->int16", 7.0 * np,
        [&] { out.poison(0xFF); }, chain, verify);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(kern));
}

int main(int argc, char** argv) {
  std::set<std::string> want;
  for (int i = 1; i < argc; ++i) want.insert(argv[i]);
  auto on = [&](const char* w) { return want.empty() || want.count(w) > 0; };
  const int dev = 0;
  CUDA_CHECK(cudaSetDevice(dev));
  CUDA_CHECK(cudaGetDeviceProperties(&g_prop, dev));
  CUDA_CHECK(cudaStreamCreate(&g_stream));
  for (auto& e : g_ev) CUDA_CHECK(cudaEventCreate(&e));
  g_npp.hStream = g_stream;
  g_npp.nCudaDeviceId = dev;
  g_npp.nMultiProcessorCount = g_prop.multiProcessorCount;
  g_npp.nMaxThreadsPerMultiProcessor = g_prop.maxThreadsPerMultiProcessor;
  g_npp.nMaxThreadsPerBlock = g_prop.maxThreadsPerBlock;
  g_npp.nSharedMemPerBlock = g_prop.sharedMemPerBlock;
  CUDA_CHECK(cudaDeviceGetAttribute(&g_npp.nCudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&g_npp.nCudaDevAttrComputeCapabilityMinor, cudaDevAttrComputeCapabilityMinor, dev));
  CUDA_CHECK(cudaStreamGetFlags(g_stream, &g_npp.nStreamFlags));
  printf("# device: %s, sm_%d%d, %d SMs\n", g_prop.name, g_prop.major, g_prop.minor, g_prop.multiProcessorCount);
  printf("op,impl,shape,dtype,median_us,gbps,max_abs_err\n");
  fflush(stdout);
  if (on("W0")) w0_copy();
  if (on("W4")) w4_float4_poisoned();
  if (on("W10")) w10_pool();
  if (on("W11")) w11_winsum_i32();
  if (on("W12")) w12_chain_npp();
  CUDA_CHECK(cudaDeviceSynchronize());
  if (!g_failures.empty()) {
    for (auto& f : g_failures) printf("!!!   %s\n", f.c_str());
    return 1;
  }
  printf("# all implementations verified OK\n");
  return 0;
}
