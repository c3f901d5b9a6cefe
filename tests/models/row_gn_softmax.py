"""Linear -> GroupNorm -> softmax over the features: a GroupNorm beside a row reduction (groups of 5)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3
input_size = 19
hidden_size = 40
num_groups = 8


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups, hidden_size)

    def forward(self, x):
        return F.softmax(self.gn(self.fc(x)), dim=1)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
