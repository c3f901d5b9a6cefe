"""Refused: a per-channel parameter against a (batch, 1) row value (it broadcasts the row value to (batch, hidden))."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.p = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x):
        x = self.fc(x)
        return x.sum(dim=1, keepdim=True) * self.p


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16]
