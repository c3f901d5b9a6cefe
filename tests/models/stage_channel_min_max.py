"""Element-wise min / max against per-channel parameters, each spelling torch has: a ReLU first, so that where the
floor is 0 x and p tie (torch.maximum splits a tie's gradient between them), then torch.min, torch.fmax with the
parameter first (its ties go to the parameter), x.fmin."""
import torch
import torch.nn as nn

batch_size = 9
input_size = 37
hidden_size = 130


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        floor = torch.rand(hidden_size) * 0.2
        floor[::2] = 0.0  # ties with the ReLU's zeros
        self.floor = nn.Parameter(floor)
        self.ceiling = nn.Parameter(torch.rand(1, hidden_size) * 0.5 + 0.2)
        self.low = nn.Parameter(torch.rand(hidden_size) * 0.3)
        self.cap = nn.Parameter(torch.rand(hidden_size) * 0.4 + 0.1)

    def forward(self, x):
        x = self.fc(x)
        x = torch.relu(x)
        x = torch.maximum(x, self.floor)
        x = torch.min(x, self.ceiling)
        x = torch.fmax(self.low, x)
        x = x * 2.0
        x = x.fmin(self.cap)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
