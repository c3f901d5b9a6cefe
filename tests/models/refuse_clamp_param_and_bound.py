"""Refused: a clamp with a parameter bound and a second bound in one call."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.lower = nn.Parameter(torch.zeros(hidden_size))

    def forward(self, x):
        x = self.fc(x)
        return torch.clamp(x, min=self.lower, max=6.0)


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16]
