"""Linear (no bias) -> GELU -> F.log_softmax(dim=-1) (batch 3, 37 features)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3
input_size = 20
hidden_size = 37


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size, bias=False)

    def forward(self, x):
        x = F.gelu(self.fc(x))
        return F.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
