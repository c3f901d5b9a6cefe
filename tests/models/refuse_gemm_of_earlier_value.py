"""Refused: a second GEMM of an earlier value of the chain (a branch), not of the last stage's result."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)

    def forward(self, x):
        h = self.fc(x)
        y = torch.relu(h)
        return self.fc2(h) + y


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16]
