"""No GroupNorm at all: Linear -> ReLU -> x * scale -> tanh -> shift + x -> clamp
(constants from __init__ attributes and literals)."""
import torch
import torch.nn as nn

batch_size = 5
input_size = 37
hidden_size = 130


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, scale=2.0, shift=0.5):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.act = nn.ReLU()
        self.scale = scale
        self.shift = shift

    def forward(self, x):
        x = self.fc(x)
        x = self.act(x)
        x = x * self.scale
        x = torch.tanh(x)
        x = self.shift + x
        x = torch.clamp(x, -0.5, 0.75)
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
