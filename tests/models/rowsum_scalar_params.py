"""Linear -> x * scale (a scalar parameter, shape ()) -> x + offset (shape (1,)) -> x * gain (per channel) -> sum(dim=1)
-> tanh: the row-sum rewrite with scalar parameters in its head; each one's gradient the sum of its shares over
the channels, in double."""
import torch
import torch.nn as nn

batch_size = 7
input_size = 26
hidden_size = 22


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.scale = nn.Parameter(torch.tensor(1.5))
        self.offset = nn.Parameter(torch.full((1,), -0.25))
        self.gain = nn.Parameter(torch.rand(hidden_size) + 0.5)

    def forward(self, x):
        x = self.fc(x) * self.scale
        x = x + self.offset
        x = x * self.gain
        x = torch.sum(x, dim=1)
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
