"""Linear -> sigmoid -> x / x.sum(dim=-1, keepdim=True): rows normalized to sum 1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 6
input_size = 30
hidden_size = 50


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = torch.sigmoid(self.fc(x))
        return x / x.sum(dim=-1, keepdim=True)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
