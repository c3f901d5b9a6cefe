"""A Linear with nothing after it (no bias): the identity stage, one fused GEMM."""
import torch
import torch.nn as nn

batch_size = 5
input_size = 29
hidden_size = 70


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size, bias=False)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
