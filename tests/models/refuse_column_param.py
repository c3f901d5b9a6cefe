"""Refused: a parameter of shape (hidden, 1) is not per-channel (it broadcasts along the batch instead)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.scale = nn.Parameter(torch.rand(hidden_size, 1))

    def forward(self, x):
        x = self.fc(x)
        x = x * self.scale
        return x


def get_inputs():
    return [torch.rand(16, 32)]


def get_init_inputs():
    return [32, 16]
