"""A small layer at awkward sizes (issue 14's example): Linear(513 -> 1025) -> ReLU -> divide, batch 777.

    fusegen from-model examples/relu_divide_777.py --bench
"""
import torch
import torch.nn as nn

batch_size = 777
in_features = 513
out_features = 1025
divisor = 2.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = torch.relu(x)
        return x / self.divisor


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
