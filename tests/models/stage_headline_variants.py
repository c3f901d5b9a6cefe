"""The headline stages spelled otherwise, with more after: GroupNorm -> LeakyReLU -> x + x -> x.mul(p) -> ReLU6."""
import torch
import torch.nn as nn

batch_size = 16
input_size = 64
hidden_size = 96
num_groups = 6


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, negative_slope=0.05):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups, hidden_size)
        self.act = nn.LeakyReLU(negative_slope)
        self.scale = nn.Parameter(torch.rand(hidden_size) + 0.5)
        self.relu6 = nn.ReLU6()

    def forward(self, x):
        x = self.act(self.gn(self.fc(x)))
        x = x + x
        x = x.mul(self.scale)
        x = self.relu6(x)
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
