"""The column strategy with a detached residual: a BatchNorm1d's output, detached, added after a ReLU."""
import torch
import torch.nn as nn

batch_size = 24
input_size = 48
hidden_size = 72


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.bn = nn.BatchNorm1d(hidden_size)

    def forward(self, x):
        x = self.fc(x)
        x = self.bn(x)
        h = x.detach()
        x = torch.relu(x)
        x = x + h
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
