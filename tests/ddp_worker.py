"""One rank of the data-parallel training test (tests/test_gpu_real_use.py runs two of these).

    python tests/ddp_worker.py MODULE.py RANK WORLD STORE_DIR OUT.pt

Trains the reference Model and the generated ModelNew, each wrapped in DistributedDataParallel, the same way
(same seed, same per-rank batches, SGD) for a few steps, and rank 0 saves both final state dicts. NCCL when
each rank has a GPU of its own, else gloo (two ranks sharing one GPU).
"""
import datetime
import importlib.util
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from helpers import reference_namespace

STEPS, BATCH = 4, 48


def main(module_path, rank, world, store_dir, out_path):
    rank, world = int(rank), int(world)
    device = torch.device("cuda", rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    backend = "nccl" if torch.cuda.device_count() >= world else "gloo"
    dist.init_process_group(backend, init_method=f"file://{store_dir}/store", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    spec = importlib.util.spec_from_file_location("ddp_module", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ns = reference_namespace()
    sizes = (module.INPUT_SIZE, module.HIDDEN_SIZE, module.NUM_GROUPS)
    final = {}
    for name, cls in (("reference", ns["Model"]), ("fusegen", module.ModelNew)):
        torch.manual_seed(0)
        model = DistributedDataParallel(cls(*sizes).to(device), device_ids=[device.index])
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        for step in range(STEPS):
            gen = torch.Generator().manual_seed(1000 * step + rank)  # each rank its own shard of the batch
            x = torch.rand(BATCH, sizes[0], generator=gen).to(device)
            target = torch.randn(BATCH, sizes[1], generator=gen).to(device)
            opt.zero_grad(set_to_none=True)
            loss = (model(x) - target).pow(2).mean()
            loss.backward()  # DDP all-reduces the gradients here
            opt.step()
        final[name] = {k: v.detach().cpu() for k, v in model.module.state_dict().items()}
    if rank == 0:
        torch.save(dict(final, backend=backend), out_path)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:])
