"""Linear -> torch.amin(x, 1, keepdim=True) - x: the row value first."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3
input_size = 21
hidden_size = 17


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = self.fc(x)
        return torch.amin(x, 1, keepdim=True) - x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
