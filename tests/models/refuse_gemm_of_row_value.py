"""Refused: a GEMM of a row value (one value a row) after a reduction."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(1, hidden_size)

    def forward(self, x):
        s = self.fc(x).sum(dim=1, keepdim=True)
        return self.fc2(s)


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16]
