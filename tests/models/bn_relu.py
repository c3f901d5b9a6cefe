"""Linear -> BatchNorm1d -> ReLU: the classic block, batch statistics in training, running ones in eval."""
import torch
import torch.nn as nn

batch_size = 16
input_size = 33
hidden_size = 40


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.bn = nn.BatchNorm1d(hidden_size)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.fc(x)))


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
