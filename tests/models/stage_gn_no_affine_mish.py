"""GroupNorm without affine parameters (groups of 3 channels), then Mish and constants: x.mul(c), x / c, x + c."""
import torch
import torch.nn as nn

batch_size = 7
input_size = 64
hidden_size = 96
num_groups = 32


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups, hidden_size, affine=False)
        self.mish = nn.Mish()

    def forward(self, x):
        x = self.fc(x)
        x = self.gn(x)
        x = self.mish(x)
        x = x.mul(2.0)
        x = x / 3.0
        x = x + 0.1
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
