"""Tensor-core ceiling of the wgmma TF32 forms on this GPU: back-to-back wgmma from registers (RS: the form
the wgmma engine uses, A = the raw operand split in registers) or from shared memory (SS), no memory traffic.

    PYTHONPATH=. python benchmarks/wgmma_rate.py        # sm_90 only; prints TFLOP/s per form

Each block holds `wgs` warpgroups issuing groups of 4 wgmma (one 32-deep k stage), one group in flight, as
the engine's consumers do; one block per SM. What this reaches bounds what any tiling of that form can reach.
"""
import sys

import torch
from torch.utils.cpp_extension import load_inline


def _wgmma(n, rs):
    acc = ", ".join(f"%{i}" for i in range(n // 2))
    a = "{ %%%d, %%%d, %%%d, %%%d }" % tuple(range(n // 2, n // 2 + 4)) if rs else "%%%d" % (n // 2)
    b = n // 2 + (4 if rs else 1)
    operands = ", ".join(f'"+f"(acc[{i}])' for i in range(n // 2))
    a_in = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3])' if rs else '"l"(da)'
    return ('asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0; '
            f'wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 {{ {acc} }}, {a}, %{b}, p, 1, 1; }}\\n"'
            f" : {operands} : {a_in}, \"l\"(db));")


def _kernel(n, rs):
    name = f"rate_n{n}_{'rs' if rs else 'ss'}"
    return name, f"""
template <int WGS>
__global__ void __launch_bounds__(128 * WGS, 1) {name}(float* out, int iters) {{
  extern __shared__ __align__(1024) float smem[];
  float* b_tile = smem;                          // {n} rows x 32 fp32 (128-byte swizzle rows)
  float* a_tile = smem + {n} * 32 + (threadIdx.x / 128) * 64 * 32;  // 64 x 32 per warpgroup (SS)
  for (int i = threadIdx.x; i < {n} * 32 + WGS * 64 * 32; i += blockDim.x) smem[i] = 1e-3f * (i % 7);
  __syncthreads();
  float acc[{n // 2}];
  for (int i = 0; i < {n // 2}; ++i) acc[i] = 0.f;
  unsigned a[4];
  for (int i = 0; i < 4; ++i) a[i] = __float_as_uint(1e-3f * (threadIdx.x % 5 + i)) & 0xffffe000u;
  auto desc = [](const float* p) {{
    return ((static_cast<unsigned long long>(__cvta_generic_to_shared(p)) & 0x3FFFF) >> 4) | (1ull << 16) |
           (64ull << 32) | (1ull << 62);
  }};
  const unsigned long long db0 = desc(b_tile), da0 = desc(a_tile);
  for (int it = 0; it < iters; ++it) {{
    asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
#pragma unroll
    for (int k8 = 0; k8 < 4; ++k8) {{
      const unsigned long long db = db0 + 2 * k8, da = da0 + 2 * k8;
      {_wgmma(n, rs)}
    }}
    asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\\n" ::: "memory");
  }}
  asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");
  float s = 0.f;
  for (int i = 0; i < {n // 2}; ++i) s += acc[i];
  if (s == 12345.f) out[threadIdx.x] = s;  // keeps the work alive
}}
"""


def main():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("wgmma_rate: needs an sm_90 GPU", file=sys.stderr)
        return 1
    forms = [(n, rs, wgs) for n in (128, 256) for rs in (True, False) for wgs in (1, 2, 3)
             if not (n == 256 and wgs == 3)]
    sources, launchers = [], []
    for n, rs in sorted({(n, rs) for n, rs, _ in forms}):
        name, src = _kernel(n, rs)
        sources.append(src)
        for wgs in (1, 2, 3):
            launchers.append(f"""
void {name}_{wgs}(torch::Tensor out, int64_t iters, int64_t blocks) {{
  const int bytes = ({n} * 32 + {wgs} * 64 * 32) * 4;
  cudaFuncSetAttribute({name}<{wgs}>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  {name}<{wgs}><<<blocks, 128 * {wgs}, bytes>>>(out.data_ptr<float>(), (int)iters);
}}""")
    cuda = "#include <torch/extension.h>\n" + "".join(sources) + "".join(launchers)
    names = [f"rate_n{n}_{'rs' if rs else 'ss'}_{w}" for n, rs in sorted({(n, rs) for n, rs, _ in forms})
             for w in (1, 2, 3)]
    cpp = "".join(f"void {x}(torch::Tensor out, int64_t iters, int64_t blocks);\n" for x in names)
    mod = load_inline("fusegen_wgmma_rate", cpp, cuda_sources=cuda, functions=names,
                      extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = torch.zeros(512, device="cuda")
    iters = 20000
    print(f"{'form':<10} {'warpgroups':>10} {'TFLOP/s':>9}")
    for n, rs, wgs in forms:
        fn = getattr(mod, f"rate_n{n}_{'rs' if rs else 'ss'}_{wgs}")
        fn(out, 100, sms)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(out, iters, sms)
        end.record()
        end.synchronize()
        flops = 2.0 * 64 * n * 32 * iters * wgs * sms
        print(f"m64n{n}k8 {'RS' if rs else 'SS'} {wgs:>10} {flops / start.elapsed_time(end) / 1e9:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
