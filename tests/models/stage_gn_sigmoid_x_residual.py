"""After GroupNorm (groups of 3): sigmoid(x) * x, a scale, the GroupNorm's output added back, then clamp_max."""
import torch
import torch.nn as nn

batch_size = 3
input_size = 37
hidden_size = 48
num_groups = 16


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups, hidden_size)

    def forward(self, x):
        x = self.fc(x)
        x = self.gn(x)
        h = x
        x = torch.sigmoid(x) * x
        x = x * 0.5
        x = x + h
        x = x.clamp_max(1.0)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
