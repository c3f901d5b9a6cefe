import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 33
input_size = 41
hidden_size = 100


# Linear -> F.max_pool1d with dilation and ceil_mode (the last window partly past the row) -> softmax -> a
# per-channel scale at the pooled width
class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        pooled = -(-(hidden_size - 2 * (3 - 1) - 1) // 2) + 1  # torch's length with ceil_mode
        self.scale = nn.Parameter(torch.rand(pooled) + 0.5)

    def forward(self, x):
        x = self.fc(x)
        x = F.max_pool1d(x.unsqueeze(1), 3, stride=2, dilation=2, ceil_mode=True).squeeze(1)
        x = torch.softmax(x, dim=1)
        return x * self.scale


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
