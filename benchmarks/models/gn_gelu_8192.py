"""examples/dropout_gn_gelu_8192.py without its dropout (Linear -> GroupNorm -> GELU, 1024 x 8192 -> 8192): beside
it, benchmarks/kernel_times.py tells the dropout's share of the step from GELU's (docs/perf-notes.md v0.22).

    device: PYTHONPATH=. python3 benchmarks/kernel_times.py benchmarks/models/gn_gelu_8192.py --reps 10
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 512


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        return F.gelu(self.gn(self.fc(x)))


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
