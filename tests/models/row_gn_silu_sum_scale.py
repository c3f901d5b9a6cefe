"""Linear -> * p -> GroupNorm (7 groups of 3) -> SiLU -> sum over the features
(keepdim) -> * 0.5: a per-channel parameter before the GroupNorm, a row value as the output."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 7
input_size = 10
hidden_size = 21
num_groups = 7


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.p = nn.Parameter(torch.rand(hidden_size) + 0.5)
        self.gn = nn.GroupNorm(num_groups, hidden_size)

    def forward(self, x):
        x = F.silu(self.gn(self.fc(x) * self.p))
        return x.sum(dim=1, keepdim=True) * 0.5


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
