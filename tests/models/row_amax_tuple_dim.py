"""Linear -> ReLU -> x.amax(dim=(1,)): torch.amax over a one-element tuple of dims (ties share the gradient)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
input_size = 33
hidden_size = 65


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        return F.relu(self.fc(x)).amax(dim=(1,))


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
