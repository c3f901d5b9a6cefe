"""The Linear inside an nn.Sequential (weight layers.0.weight), GELU and Sigmoid modules, x / c and x - p."""
import torch
import torch.nn as nn

batch_size = 12
input_size = 48
hidden_size = 96


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(input_size, hidden_size), nn.GELU(), nn.Sigmoid())
        self.offset = nn.Parameter(torch.rand(hidden_size) * 0.5)

    def forward(self, x):
        x = self.layers(x)
        x = x.div(2.0)
        x = x - self.offset
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
