"""BatchNorm1d(track_running_stats=False): batch statistics in training and in eval, no buffers; a sigmoid and a
per-channel shift after it; batch 2 (the smallest it takes), 17 features, no bias on the Linear."""
import torch
import torch.nn as nn

batch_size = 2
input_size = 9
hidden_size = 17


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size, bias=False)
        self.bn = nn.BatchNorm1d(hidden_size, track_running_stats=False)
        self.shift = nn.Parameter(torch.randn(hidden_size) * 0.1)

    def forward(self, x):
        return torch.sigmoid(self.bn(self.fc(x))) - self.shift


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
