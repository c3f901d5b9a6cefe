"""Linear -> torch.sum(dim=1, keepdim=True) -> x * 2 -> ReLU: a (batch, 1) output."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 7
input_size = 40
hidden_size = 24


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = torch.sum(self.fc(x), 1, keepdim=True)
        return torch.relu(x * 2.0)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
