"""A detached residual as benchmark layers write it: Linear -> original = x.clone().detach() -> x * 2 -> GELU ->
x + original (no gradient through it) -> ReLU.

    fusegen from-model examples/detached_residual_8192.py --bench
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 8192
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.fc(x)
        original_x = x.clone().detach()
        x = F.gelu(x * 2.0)
        x = x + original_x
        return torch.relu(x)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
