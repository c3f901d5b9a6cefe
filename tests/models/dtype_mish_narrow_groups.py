import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1031
input_size = 530
hidden_size = 915
num_groups = 305


# Drawn by the per-dtype random chains on the H200 (session 22): in bfloat16 the reference rounds Mish's output
# before a GroupNorm of 3 channels, whose small variances amplify that rounding past allclose(1e-2) on ~0.5% of
# outputs; a fused computation (ours, torch.compile's) does not round there.
class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size, bias=False)
        self.gn = nn.GroupNorm(num_groups, hidden_size, affine=False)

    def forward(self, x):
        v0 = self.fc(x)
        v1 = F.mish(v0)
        v2 = self.gn(v1)
        return v2


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
