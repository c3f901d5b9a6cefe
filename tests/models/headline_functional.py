"""The same layer written with functional calls for the stages (modules kept for the parameters)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
input_size = 64
hidden_size = 32
num_groups = 4


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5, negative_slope=0.2):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups, hidden_size, eps=eps)
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.gn(self.fc(x))
        x = F.leaky_relu(x, self.negative_slope)
        return x + x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
