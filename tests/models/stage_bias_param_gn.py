"""A Linear without bias, then its bias added from a parameter; stages before and after GroupNorm (groups of 16)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 11
input_size = 100
hidden_size = 48
num_groups = 3


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, negative_slope=0.1):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size, bias=False)
        self.bias = nn.Parameter(torch.randn(hidden_size) * 0.02)
        self.gn = nn.GroupNorm(num_groups, hidden_size, eps=1e-3)
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.fc(x)
        x = x + self.bias
        x = torch.relu(x)
        x = self.gn(x)
        x = F.leaky_relu(x, self.negative_slope)
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
