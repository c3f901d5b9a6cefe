"""F.linear with raw parameters; a residual of a later value before GroupNorm (one channel a group), then clamp."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 6
input_size = 37
hidden_size = 96


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, min_value=-0.5, max_value=0.75):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size) * 0.1)
        self.bias = nn.Parameter(torch.randn(hidden_size) * 0.1)
        self.gn = nn.GroupNorm(hidden_size, hidden_size)
        nn.init.uniform_(self.gn.bias, -1.0, 1.0)  # one channel a group normalizes to 0: the output is the bias
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x):
        x = F.linear(x, self.weight, self.bias)
        x = F.gelu(x, approximate="tanh")
        h = x
        x = torch.tanh(x)
        x = x * 1.5
        x = h + x
        x = self.gn(x)
        x = torch.clamp(x, min=self.min_value, max=self.max_value)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
