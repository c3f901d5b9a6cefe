"""Per-channel multiply and divide by parameters (shapes (hidden,) and (1, hidden)), in both operand orders."""
import torch
import torch.nn as nn

batch_size = 9
input_size = 64
hidden_size = 130


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.scale = nn.Parameter(torch.rand(hidden_size) + 0.5)
        self.divisor = nn.Parameter(torch.rand(1, hidden_size) + 1.0)
        self.gain = nn.Parameter(torch.rand(hidden_size) + 0.5)

    def forward(self, x):
        x = self.fc(x)
        x = x * self.scale
        x = torch.sigmoid(x)
        x = x / self.divisor
        x = self.gain * x
        x = x.clamp_min(0.1)
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
