"""Dropout in training as benchmark and transformer layers write it: Linear -> GroupNorm -> GELU -> Dropout(0.1),
at 1024 x 8192 -> 8192. fusegen draws the mask in the GEMM's epilogue from its own Philox stream (seeded from torch's
generator) and recomputes it in backward: no mask tensor is stored or read.

    fusegen from-model examples/dropout_gn_gelu_8192.py --bench
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 512
dropout_p = 0.1


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups, dropout_p):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        return self.dropout(F.gelu(self.gn(self.fc(x))))


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, dropout_p]
