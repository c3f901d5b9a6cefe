"""Element types, declared once: what a tensor holds in memory (the plan's `element`: x, W, the bias and the
stages' parameters, the output and every gradient), what the epilogue computes in (an op's `compute`) and what
reductions accumulate in (an op's `accumulate`). The templates name them through aliases (`elem_t`, `compute_t`,
`stat_t` in templates/common.cuh.j2) and the generated module checks tensors against `torch`; a new element type
is an entry here plus the engines that multiply it."""
import dataclasses


@dataclasses.dataclass(frozen=True)
class DType:
    name: str  # torch's word, as in torch.float32
    cuda: str  # the CUDA type
    aten: str  # its torch::ScalarType in C++
    bytes: int

    @property
    def torch(self) -> str:
        """Its Python spelling in a generated module."""
        return f"torch.{self.name}"


FLOAT32 = DType("float32", "float", "torch::kFloat", 4)
FLOAT64 = DType("float64", "double", "torch::kDouble", 8)
DTYPES = {d.name: d for d in (FLOAT32, FLOAT64)}


def dtype(name: str) -> DType:
    try:
        return DTYPES[name]
    except KeyError:
        raise KeyError(f"no element type {name!r} (fusegen/dtypes.py); known: {', '.join(DTYPES)}") from None
