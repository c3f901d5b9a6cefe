"""Refused: BatchNorm normalizes over the batch."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.bn = nn.BatchNorm1d(hidden_size)

    def forward(self, x):
        return self.bn(self.fc(x))


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16]
