"""A max pool over the features before a GroupNorm: Linear -> MaxPool1d(2) on x.unsqueeze(1) -> GroupNorm(256) over the
4096 pooled features -> GELU. fusegen keeps the GEMM at the Linear's width (a max pool is not linear) and runs the pool
and the GroupNorm in its row kernel (a pass for the groups' means and variances, one for the output).

    fusegen from-model examples/maxpool_gn_gelu_8192.py --bench
"""
import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 256


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.pool = nn.MaxPool1d(2)
        self.gn = nn.GroupNorm(num_groups, out_features // 2)

    def forward(self, x):
        x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)
        return torch.nn.functional.gelu(self.gn(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
