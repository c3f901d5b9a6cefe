"""Refused: a computation under torch.no_grad() (its value carries no gradient, which fx's graph does not show)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = self.fc(x)
        with torch.no_grad():
            x = x * 2.0
        x = torch.relu(x)
        return x


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return [16, 32]
