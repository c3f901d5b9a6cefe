"""A Linear and its dropout: the mask read straight off the output (kept: z / (1 - p), dropped: 0)."""
import torch
import torch.nn as nn

batch_size = 33
input_size = 50
hidden_size = 96


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, p=0.3):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(self.fc(x))


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
