"""Scalar parameters (shape (), (1,) and (1, 1)) in element-wise ops: a learnable scale, a shift, a floor against
torch.max and a clamp's bound; their gradients are sums over every element."""
import torch
import torch.nn as nn

batch_size = 11
input_size = 45
hidden_size = 84


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.scale = nn.Parameter(torch.tensor(1.7))
        self.shift = nn.Parameter(torch.full((1,), -0.3))
        self.floor = nn.Parameter(torch.full((1, 1), -0.2))
        self.cap = nn.Parameter(torch.tensor(0.9))

    def forward(self, x):
        x = self.fc(x)
        x = x * self.scale
        x = torch.tanh(x)
        x = x - self.shift
        x = torch.max(x, self.floor)
        x = torch.clamp(x, max=self.cap)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
