"""An example layer outside the headline: Linear -> GELU (tanh) -> per-channel scale -> GroupNorm -> SiLU.

    fusegen from-model examples/gelu_scale_gn_silu.py --bench
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 4096
out_features = 4096
num_groups = 64


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.ones(out_features))
        self.gn = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        x = F.gelu(self.fc(x), approximate="tanh")
        x = x * self.scale
        x = self.gn(x)
        return F.silu(x)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
