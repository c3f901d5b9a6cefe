"""A row reduction layer: Linear -> softmax over the features -> x * 2.

    fusegen from-model examples/softmax_8192.py --bench
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
        return torch.softmax(self.fc(x), dim=1) * 2.0


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
