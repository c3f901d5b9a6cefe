"""Refused: a second GroupNorm (the layer normalizes once)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups, hidden_size)
        self.gn2 = nn.GroupNorm(num_groups, hidden_size)

    def forward(self, x):
        x = self.gn(self.fc(x))
        x = torch.relu(x)
        x = self.gn2(x)
        return x


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16, 4]
