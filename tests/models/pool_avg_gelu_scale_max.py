import torch
import torch.nn as nn

batch_size = 96
input_size = 200
hidden_size = 256
pool_kernel_size = 16
scale_factor = 2.0


# Linear -> AvgPool1d over the features -> GELU -> scale -> max over the features (a kernel-benchmark pattern)
class Model(nn.Module):
    def __init__(self, in_features, out_features, pool_kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.avg_pool = nn.AvgPool1d(kernel_size=pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.matmul(x)
        x = self.avg_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.nn.functional.gelu(x)
        x = x * self.scale_factor
        x = torch.max(x, dim=1).values
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, pool_kernel_size, scale_factor]
