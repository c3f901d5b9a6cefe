"""torch.matmul with w (in, out) and a separate bias parameter added as p + x, then F.mish and nn.Tanh."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 17
input_size = 100
hidden_size = 130


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.w = nn.Parameter(torch.randn(input_size, hidden_size) * 0.1)
        self.b = nn.Parameter(torch.randn(1, hidden_size) * 0.02)
        self.tanh = nn.Tanh()

    def forward(self, x):
        x = torch.matmul(x, self.w)
        x = self.b + x
        x = F.mish(x)
        x = self.tanh(x)
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
