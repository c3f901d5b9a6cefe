"""An MLP whose last layer sums each row: Linear -> ReLU -> Linear -> x * 0.5 -> sum(dim=1): two fused layers, the
second a row sum right after its GEMM (the row-sum rewrite: a GEMV with the weight reduced over its outputs)."""
import torch
import torch.nn as nn

batch_size = 6
input_size = 20
hidden_size = 28


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = self.fc2(x) * 0.5
        return x.sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
