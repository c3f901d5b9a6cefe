"""x @ W^T -> x / 2 -> torch.sum(dim=1, keepdim=True) -> x * scaling_factor (a kernel-benchmark pattern): the row
sum right after the GEMM through a scalar divide, rewritten as a GEMV; the weight a bare parameter, no bias."""
import torch
import torch.nn as nn

batch_size = 9
input_size = 37
hidden_size = 29
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
