"""Element-wise stages with a per-channel parameter before a BatchNorm1d without affine (momentum 0.3), Tanh
after; 129 features (not a multiple of 32 columns a block), batch 5."""
import torch
import torch.nn as nn

batch_size = 5
input_size = 64
hidden_size = 129


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.scale = nn.Parameter(torch.randn(hidden_size) * 0.5 + 1.0)
        self.bn = nn.BatchNorm1d(hidden_size, affine=False, momentum=0.3)

    def forward(self, x):
        x = torch.nn.functional.leaky_relu(self.fc(x), 0.1)
        x = x * self.scale
        return torch.tanh(self.bn(x))


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
