"""An MLP block: Linear 8192 -> 8192 -> ReLU -> Linear 8192 -> 8192 (two fused layers, one a GEMM).

    fusegen from-model examples/mlp_relu_8192.py --bench
"""
import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
hidden_features = 8192
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features, hidden_features, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.fc2 = nn.Linear(hidden_features, out_features)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden_features, out_features]
