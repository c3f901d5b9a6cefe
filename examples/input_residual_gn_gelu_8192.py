"""A residual block on the layer's own input: x + GELU(GroupNorm(Linear(x))), 1024 x 8192 -> 8192. fusegen reads x
in the GEMM's epilogue and adds the residual's gradient into dx after the grad_input GEMM.

    fusegen from-model examples/input_residual_gn_gelu_8192.py --bench
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
features = 8192
num_groups = 512


class Model(nn.Module):
    def __init__(self, features, num_groups):
        super().__init__()
        self.fc = nn.Linear(features, features)
        self.norm = nn.GroupNorm(num_groups, features)

    def forward(self, x):
        return x + F.gelu(self.norm(self.fc(x)))


def get_inputs():
    return [torch.rand(batch_size, features)]


def get_init_inputs():
    return [features, num_groups]
