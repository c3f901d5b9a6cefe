"""Linear -> torch.softmax(dim=1): a softmax over the features (batch 1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1
input_size = 32
hidden_size = 16


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = self.fc(x)
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
