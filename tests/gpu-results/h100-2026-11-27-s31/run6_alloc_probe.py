import sys, pathlib, torch
from fusegen.tools.tune import _import, _build_all
paths = [pathlib.Path(p) for p in sys.argv[1:]]
print("build failed:", _build_all(paths, len(paths)))
keys = ("segment.all.allocated", "segment.all.freed", "num_alloc_retries", "num_device_alloc", "num_device_free")
for p in paths + paths:
    m = _import(p).ModelNew(8192, 8192, 512).cuda()
    x = torch.randn(1024, 8192, device="cuda", requires_grad=True)
    g = torch.randn(1024, 8192, device="cuda")
    for _ in range(3):
        m(x).backward(g)
    torch.cuda.synchronize()
    s0 = torch.cuda.memory_stats()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(20):
        m(x).backward(g)
    e1.record()
    torch.cuda.synchronize()
    s1 = torch.cuda.memory_stats()
    print(p.name, f"{e0.elapsed_time(e1) / 20:.3f} ms/step", {k: s1[k] - s0[k] for k in keys if k in s1},
          f"reserved {s1['reserved_bytes.all.current'] / 2**30:.2f} GiB", flush=True)
    del m, x, g
    torch.cuda.empty_cache()
