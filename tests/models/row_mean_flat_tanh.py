"""Linear -> x.mean(-1) -> tanh: a (batch,) output."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1
input_size = 12
hidden_size = 9


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        return torch.tanh(self.fc(x).mean(-1))


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
