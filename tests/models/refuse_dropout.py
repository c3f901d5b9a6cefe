"""Refused: a dropout of whole channels (nn.Dropout1d); nn.Dropout and F.dropout are generated."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.drop = nn.Dropout1d(0.1)

    def forward(self, x):
        return self.drop(self.fc(x))


def get_inputs():
    return [torch.rand(4, 32)]


def get_init_inputs():
    return [32, 16]
