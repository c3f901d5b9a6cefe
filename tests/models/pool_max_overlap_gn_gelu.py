import torch
import torch.nn as nn

batch_size = 48
input_size = 70
hidden_size = 96
num_groups = 6


# Linear -> MaxPool1d with overlapping, padded windows -> GroupNorm over the pooled features -> GELU
class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.pool = nn.MaxPool1d(kernel_size=4, stride=2, padding=1)
        self.gn = nn.GroupNorm(num_groups, hidden_size // 2)

    def forward(self, x):
        x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)
        return nn.functional.gelu(self.gn(x))


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
