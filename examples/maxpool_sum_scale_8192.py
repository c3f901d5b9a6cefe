"""A max pool over the features as benchmark layers write it: Linear -> MaxPool1d(2) on x.unsqueeze(1) -> sum over the
features -> x * 0.5. A max pool is not linear: fusegen keeps the GEMM at the Linear's width, and the row kernel reads
each window's maximum of the GEMM's output as it sums the row (backward: each window's gradient to its maximum).

    fusegen from-model examples/maxpool_sum_scale_8192.py --bench
"""
import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
kernel_size = 2
scale_factor = 0.5


class Model(nn.Module):
    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.max_pool = nn.MaxPool1d(kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.matmul(x)
        x = self.max_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.sum(x, dim=1)
        x = x * self.scale_factor
        return x


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, kernel_size, scale_factor]
