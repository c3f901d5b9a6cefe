"""Refused: the chain goes on from a detached value (nothing would carry a gradient to the Linear)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = self.fc(x)
        h = x.detach()
        y = torch.relu(h)
        return y


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return [16, 32]
