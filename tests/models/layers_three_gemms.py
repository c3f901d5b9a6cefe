"""Three GEMMs spelled three ways (x @ w, F.linear, torch.matmul with a transposed weight), each with a chain after
it, the last a softmax over its features; the second layer's weight is stored (out, in), the others' (in, out)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 5
input_size = 24
hidden_size = 36


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(input_size, hidden_size) / input_size ** 0.5)
        self.w2 = nn.Parameter(torch.randn(hidden_size, hidden_size) / hidden_size ** 0.5)
        self.b2 = nn.Parameter(torch.zeros(hidden_size))
        self.w3 = nn.Parameter(torch.randn(hidden_size, hidden_size) / hidden_size ** 0.5)
        self.scale = nn.Parameter(torch.rand(hidden_size) + 0.5)

    def forward(self, x):
        x = x @ self.w1
        x = torch.tanh(x)
        x = F.linear(x, self.w2, self.b2)
        x = torch.sigmoid(x) * self.scale
        x = torch.matmul(x, self.w3.t())
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
