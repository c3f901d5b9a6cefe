import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 67
input_size = 129
hidden_size = 101


# F.avg_pool1d with overlapping windows, padding, ceil_mode and count_include_pad=False, after a Linear without
# bias stored (in, out); then one GroupNorm group over the pooled width, and SiLU
class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.w = nn.Parameter(torch.randn(input_size, hidden_size) * input_size ** -0.5)
        pooled = -(-(hidden_size + 2 - 3) // 2) + 1
        self.gn = nn.GroupNorm(1, pooled)

    def forward(self, x):
        h = x @ self.w
        h = F.avg_pool1d(h.unsqueeze(1), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False).squeeze(1)
        return F.silu(self.gn(h))


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
