"""One group of 320 channels (wider than a 128-column tile): Hardtanh -> GroupNorm -> SiLU."""
import torch
import torch.nn as nn

batch_size = 8
input_size = 100
hidden_size = 320
num_groups = 1


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, min_val=-0.5, max_val=0.75):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.hardtanh = nn.Hardtanh(min_val, max_val)
        self.gn = nn.GroupNorm(num_groups, hidden_size)
        self.silu = nn.SiLU()

    def forward(self, x):
        x = self.fc(x)
        x = self.hardtanh(x)
        x = self.gn(x)
        x = self.silu(x)
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
