"""clamp with a per-channel parameter as its bound (torch.clamp(x, min=p), x.clamp_max(q)), torch.max with the
parameter first, and a GroupNorm between: a ReLU before the lower bound, whose zero channels tie with it (clamp
gives x a tie's gradient)."""
import torch
import torch.nn as nn

batch_size = 16
input_size = 64
hidden_size = 96


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups=8):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        lower = torch.rand(hidden_size) * 0.1
        lower[1::3] = 0.0
        self.lower = nn.Parameter(lower)
        self.gn = nn.GroupNorm(num_groups, hidden_size)
        self.upper = nn.Parameter(torch.rand(1, hidden_size) + 0.5)
        self.floor = nn.Parameter(torch.rand(hidden_size) - 1.0)

    def forward(self, x):
        x = self.fc(x)
        x = torch.relu(x)
        x = torch.clamp(x, min=self.lower)
        x = self.gn(x)
        x = x.clamp_max(self.upper)
        x = torch.max(self.floor, x)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
