"""Scalar parameters on both sides of a fused GroupNorm: a scale of shape () before it (its gradient through the
GroupNorm's backward, per group), a floor of shape (1,) after it (torch.max against it)."""
import torch
import torch.nn as nn

batch_size = 24
input_size = 40
hidden_size = 64
num_groups = 8


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.scale = nn.Parameter(torch.tensor(1.5))
        self.gn = nn.GroupNorm(num_groups, hidden_size)
        self.floor = nn.Parameter(torch.tensor([-0.25]))

    def forward(self, x):
        h = self.fc(x) * self.scale
        h = self.gn(h)
        return torch.max(h, self.floor)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
