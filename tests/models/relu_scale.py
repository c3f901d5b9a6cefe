"""Linear -> ReLU -> x * 2."""
import torch
import torch.nn as nn

batch_size = 4
input_size = 32
hidden_size = 16


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) * 2.0


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
