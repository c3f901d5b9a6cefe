"""Constants through methods: x.mul(c), x.sub(c), x.clamp(lo, hi), x.add(x), x.div(c), x.add(c), x.sigmoid()."""
import torch
import torch.nn as nn

batch_size = 64
input_size = 64
hidden_size = 130


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = self.fc(x)
        x = x.mul(2.0)
        x = x.sub(0.5)
        x = x.clamp(-0.5, 0.75)
        x = x.add(x)
        x = x.div(1.5)
        x = x.add(0.25)
        x = x.sigmoid()
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
