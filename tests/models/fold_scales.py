"""Chain folds (plan/algebra.py): Linear -> x * 2 -> ReLU -> x * 0.5 -> x + x (kept: a residual reads it) ->
sigmoid -> x * 3 -> x + x -> + the kept value. Planned as ReLU -> x * 2 -> sigmoid -> x * 6 -> residual: the
positive scale moved across the ReLU into the multiply after it, each doubling merged into its multiply."""
import torch
import torch.nn as nn

batch_size = 6
input_size = 30
hidden_size = 26


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = self.fc(x) * 2.0
        x = torch.relu(x)
        x = x * 0.5
        x = x + x
        h = x
        x = torch.sigmoid(x) * 3.0
        x = x + x
        return x + h


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
