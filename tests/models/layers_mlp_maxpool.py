import torch
import torch.nn as nn

batch_size = 16
input_size = 64
hidden_size = 128


# Linear -> MaxPool1d over the features -> ReLU -> Linear: the second GEMM reads the pooled width
class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.pool = nn.MaxPool1d(2)
        self.fc2 = nn.Linear(hidden_size // 2, 32)

    def forward(self, x):
        x = self.pool(self.fc1(x).unsqueeze(1)).squeeze(1)
        x = torch.relu(x)
        return self.fc2(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
