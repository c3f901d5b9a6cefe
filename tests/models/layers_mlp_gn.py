"""A transformer-style MLP with a GroupNorm after it: Linear -> GELU (tanh) -> Linear (to another width) ->
GroupNorm -> x * 2, in a Sequential and a module of its own."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 9
input_size = 40
hidden_size = 96
num_groups = 6


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.up = nn.Sequential(nn.Linear(input_size, 2 * hidden_size), nn.GELU(approximate="tanh"))
        self.down = nn.Linear(2 * hidden_size, hidden_size)
        self.norm = nn.GroupNorm(num_groups, hidden_size)

    def forward(self, x):
        x = self.up(x)
        x = self.down(x)
        x = self.norm(x)
        return F.leaky_relu(x, 0.1) * 2.0


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
