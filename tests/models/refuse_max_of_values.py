"""Refused: element-wise max of two values of the chain (not a per-channel parameter)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        h = self.fc(x)
        y = torch.tanh(h)
        return torch.maximum(y, h)


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16]
