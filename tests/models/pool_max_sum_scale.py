import torch
import torch.nn as nn

batch_size = 128
input_size = 10
hidden_size = 5
kernel_size = 2
scale_factor = 0.5


# Linear -> MaxPool1d over the features -> sum over the features -> scale (a kernel-benchmark pattern; an odd
# width: the last feature is in no window)
class Model(nn.Module):
    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.max_pool = nn.MaxPool1d(kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.matmul(x)
        x = self.max_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.sum(x, dim=1)
        x = x * self.scale_factor
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, kernel_size, scale_factor]
