"""Linear -> sum(dim=1, keepdim) -> max(dim=1, keepdim) -> mean(dim=1, keepdim) -> logsumexp(dim=1, keepdim) (a
kernel-benchmark pattern): the reductions after the first are over its size-1 dim, identities folded by the front
end; the sum right after the GEMM is rewritten as a GEMV; the weight stored (in, out)."""
import torch
import torch.nn as nn

batch_size = 5
input_size = 31
hidden_size = 18


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.w = nn.Parameter(torch.randn(input_size, hidden_size) / input_size ** 0.5)
        self.b = nn.Parameter(torch.randn(hidden_size))

    def forward(self, x):
        x = x @ self.w + self.b
        x = torch.sum(x, dim=1, keepdim=True)
        x = torch.max(x, dim=1, keepdim=True)[0]
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


def get_inputs():
    return [torch.rand(batch_size, input_size) * 2 - 1]


def get_init_inputs():
    return [input_size, hidden_size]
