"""Host cost of reading a layer's parameters (CPU, no GPU needed): nn.Module attribute access, as the generated
module's forward does it today, against the modules' dictionaries (branch host-path).

    python benchmarks/param_lookup.py [--calls 200000]
"""
import argparse
import timeit

import torch.nn as nn


class Layer(nn.Module):  # the headline's modules (sizes do not matter here)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.gn = nn.GroupNorm(2, 64)
        self.leaky_relu = nn.LeakyReLU(0.01)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=200000)
    calls = ap.parse_args(argv).calls
    m = Layer()
    ways = {
        "four parameters, attributes (self.fc.weight ...)":
            lambda: (m.fc.weight, m.fc.bias, m.gn.weight, m.gn.bias),
        "four parameters, dictionaries (_modules / _parameters)":
            lambda: (m._modules["fc"]._parameters["weight"], m._modules["fc"]._parameters["bias"],
                     m._modules["gn"]._parameters["weight"], m._modules["gn"]._parameters["bias"]),
        "LeakyReLU slope, attributes": lambda: float(m.leaky_relu.negative_slope),
        "LeakyReLU slope, dictionary": lambda: float(m._modules["leaky_relu"].negative_slope),
    }
    print(f"host microseconds per call, {calls} calls")
    for name, fn in ways.items():
        print(f"{name:<58} {timeit.timeit(fn, number=calls) / calls * 1e6:6.2f}")


if __name__ == "__main__":
    main()
