"""Scalar parameters around a softmax over the features (the row kernels): a shift of shape (1, 1) before it, a
temperature of shape () after it."""
import torch
import torch.nn as nn

batch_size = 9
input_size = 33
hidden_size = 70


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.shift = nn.Parameter(torch.full((1, 1), 0.3))
        self.temp = nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        h = torch.tanh(self.fc(x) + self.shift)
        return torch.softmax(h, dim=1) * self.temp


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
