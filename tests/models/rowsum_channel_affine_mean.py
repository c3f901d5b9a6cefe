"""Linear -> x * scale -> x + shift -> 0.5 - x -> x / div -> x + x -> mean(dim=1) -> GELU: a row mean after a head of
per-channel parameters (multiply, add, divide) and constants, rewritten as a GEMV; every parameter's gradient goes
back through the head."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 6
input_size = 33
hidden_size = 20


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.scale = nn.Parameter(torch.randn(hidden_size))
        self.shift = nn.Parameter(torch.randn(1, hidden_size))
        self.div = nn.Parameter(torch.rand(hidden_size) + 0.5)

    def forward(self, x):
        x = self.fc(x) * self.scale
        x = x + self.shift
        x = 0.5 - x
        x = x / self.div
        x = x + x
        x = x.mean(dim=1)
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
