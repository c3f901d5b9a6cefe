"""Learnable scalars and an element-wise max against a per-channel floor: Linear -> x * scale (a scalar parameter)
-> torch.max(x, floor) -> tanh -> x + shift (a scalar parameter).

    fusegen from-model examples/scalar_max_tanh_8192.py --bench
"""
import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.tensor(1.5))
        self.floor = nn.Parameter(torch.full((out_features,), -0.25))
        self.shift = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        x = self.fc(x) * self.scale
        x = torch.max(x, self.floor)
        return torch.tanh(x) + self.shift


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
