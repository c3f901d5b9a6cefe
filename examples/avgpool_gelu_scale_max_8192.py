"""An average pool over the features as benchmark layers write it: Linear -> AvgPool1d(16) on x.unsqueeze(1) ->
GELU -> x * 2 -> max over the features. fusegen runs the pool on the Linear's weight (its rows averaged over the
windows, once per weight update where no gradient is recorded), so the GEMM is 16 times narrower.

    fusegen from-model examples/avgpool_gelu_scale_max_8192.py --bench
"""
import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
pool_kernel_size = 16
scale_factor = 2.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, pool_kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.avg_pool = nn.AvgPool1d(kernel_size=pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.matmul(x)
        x = self.avg_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.nn.functional.gelu(x)
        x = x * self.scale_factor
        x = torch.max(x, dim=1).values
        return x


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, pool_kernel_size, scale_factor]
