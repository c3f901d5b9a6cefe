"""A residual of the layer's own input (in == out features): x + tanh(relu(fc(x))) + x.detach() (the element-wise
epilogue; the detached add gives x no gradient)."""
import torch
import torch.nn as nn

batch_size = 19
input_size = 96
hidden_size = 96


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        h = x + torch.tanh(h)
        return h + x.detach()


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
