"""A residual block: x + GELU(GroupNorm(fc(x))) (the GroupNorm's fragment epilogue, the add after it)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 24
input_size = 128
hidden_size = 128
num_groups = 8


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.norm = nn.GroupNorm(num_groups, hidden_size)

    def forward(self, x):
        return x + F.gelu(self.norm(self.fc(x)))


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
