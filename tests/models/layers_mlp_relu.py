"""Two Linears with a ReLU between (an MLP block): two fused layers, backward through both."""
import torch
import torch.nn as nn

batch_size = 6
input_size = 32
hidden_size = 48


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc(x)))


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
