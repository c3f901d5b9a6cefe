"""A row reduction to one value a row: Linear -> logsumexp over the features -> LeakyReLU -> x * 0.5 (out (batch, 1)).

    fusegen from-model examples/logsumexp_tail_8192.py --bench
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
        x = torch.logsumexp(self.fc(x), dim=1, keepdim=True)
        return F.leaky_relu(x, 0.01) * 0.5


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
