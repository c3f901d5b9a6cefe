"""Row values against the tensor: Linear -> x - max over the row -> x - mean over the row -> GELU.

    fusegen from-model examples/max_mean_center_8192.py --bench
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
        x = x - torch.max(x, dim=1, keepdim=True)[0]
        x = x - x.mean(dim=1, keepdim=True)
        return F.gelu(x)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
