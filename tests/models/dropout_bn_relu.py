"""The classic MLP block: Linear -> BatchNorm1d -> ReLU -> Dropout (the column kernels)."""
import torch
import torch.nn as nn

batch_size = 40
input_size = 48
hidden_size = 120


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.bn = nn.BatchNorm1d(hidden_size)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(torch.relu(self.bn(self.fc(x))))


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
