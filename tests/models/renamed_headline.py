"""The headline chain with other attribute names: the generated module could not keep its state_dict keys."""
import torch
import torch.nn as nn

batch_size = 4
input_size = 32
hidden_size = 16
num_groups = 4


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)
        self.norm = nn.GroupNorm(num_groups, hidden_size)
        self.act = nn.LeakyReLU(0.01)

    def forward(self, x):
        x = self.act(self.norm(self.linear(x)))
        return x + x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
