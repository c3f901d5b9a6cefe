"""A GroupNorm beside a row reduction: Linear -> GroupNorm(512) -> softmax over the features.

    fusegen from-model examples/gn_softmax_8192.py --bench
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
        return F.softmax(self.gn(self.fc(x)), dim=1)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
