"""Issue 16's rewrite at 1024 x 8192 -> 8192: x @ W^T -> x / 2 -> torch.sum(dim=1, keepdim=True) -> x * 1.5, a row sum
right after the GEMM, which fusegen computes as a GEMV with the weight reduced over its outputs (cached by the
weight's version). `fusegen from-model examples/rowsum_matmul_div_sum_scale_8192.py --bench`."""
import torch
import torch.nn as nn

batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 1.5


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = torch.matmul(x, self.weight.T)
        x = x / 2
        x = torch.sum(x, dim=1, keepdim=True)
        x = x * self.scaling_factor
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
