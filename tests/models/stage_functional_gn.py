"""F.group_norm with its own parameters (groups of 16); functional stages around it and c - x."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 10
input_size = 37
hidden_size = 64
num_groups = 4


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn_w = nn.Parameter(torch.ones(hidden_size) + 0.1 * torch.randn(hidden_size))
        self.gn_b = nn.Parameter(0.1 * torch.randn(hidden_size))
        self.num_groups = num_groups
        self.eps = eps

    def forward(self, x):
        x = self.fc(x)
        x = F.silu(x)
        x = F.group_norm(x, self.num_groups, self.gn_w, self.gn_b, self.eps)
        x = F.relu(x)
        x = x - 0.25
        x = 2.0 - x
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
