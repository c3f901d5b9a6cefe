"""Dropout in training, every spelling, before and after a GroupNorm: nn.Dropout (following its own mode),
F.dropout(x, p, self.training) (the Model's mode), torch.dropout(x, p, self.training), and F.dropout(x, p)
(torch's default training=True: it drops in eval too). Group width 16."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 24
input_size = 72
hidden_size = 160
num_groups = 10


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.drop = nn.Dropout(0.25)
        self.gn = nn.GroupNorm(num_groups, hidden_size)

    def forward(self, x):
        x = self.fc(x)
        x = self.drop(F.gelu(x))
        x = self.gn(x)
        x = F.dropout(x, 0.1, self.training)
        x = torch.dropout(torch.tanh(x), 0.5, self.training)
        return F.dropout(x, p=0.3)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
