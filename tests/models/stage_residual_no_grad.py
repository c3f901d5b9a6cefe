"""A copy made under torch.no_grad() (no gradient through it), added back after a GroupNorm's SiLU and a per-channel
scale: the tracer sees the block only through autograd being off while it traces."""
import torch
import torch.nn as nn

batch_size = 7
input_size = 64
hidden_size = 128
num_groups = 8


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups, hidden_size)
        self.scale = nn.Parameter(torch.rand(hidden_size) + 0.5)

    def forward(self, x):
        x = self.fc(x)
        x = self.gn(x)
        with torch.no_grad():
            skip = x.clone()
        x = x * torch.sigmoid(x)
        x = x * self.scale
        x = x + skip
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
