"""Refused with the right reason: torch.min against a tensor is element-wise, not a reduction, and here the tensor is
a buffer (a constant tensor), not a parameter."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.register_buffer("constant", torch.tensor(0.5))

    def forward(self, x):
        x = self.fc(x)
        return torch.min(x, self.constant)


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16]
