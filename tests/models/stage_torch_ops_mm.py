"""torch.mm with w.t() (w stored (out, in)); torch.mul by a (1, hidden) parameter, torch.* constants, F.hardtanh."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 13
input_size = 37
hidden_size = 48


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, negative_slope=0.2):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size) * 0.15)
        self.gain = nn.Parameter(torch.rand(1, hidden_size) + 0.5)
        self.negative_slope = negative_slope

    def forward(self, x):
        x = torch.mm(x, self.weight.t())
        x = torch.mul(x, self.gain)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = torch.sub(x, 0.1)
        x = torch.add(x, 0.3)
        x = torch.mul(x, 3.0)
        x = torch.div(x, 2.0)
        x = F.hardtanh(x, -0.5, 0.75)
        x = torch.clip(x, max=0.5)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
