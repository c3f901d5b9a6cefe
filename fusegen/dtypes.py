"""Element types, declared once: what a tensor holds in memory (the plan's `element`: x, W, the bias and the
stages' parameters, the output and every gradient), what the epilogue computes in (an op's `compute`) and what
reductions accumulate in (an op's `accumulate`). The templates name them through aliases (`elem_t`, `compute_t`,
`stat_t` in templates/common.cuh.j2) and the generated module checks tensors against `torch`; a new element type
is an entry here plus the engines that multiply it."""
import dataclasses


def _quiet():
    return dataclasses.field(default="", repr=False)


@dataclasses.dataclass(frozen=True)
class DType:
    name: str  # torch's word, as in torch.float32
    cuda: str  # the CUDA type
    aten: str  # its torch::ScalarType in C++
    bytes: int
    # (the fields below stay out of the repr, which names and hashes modules: float32 modules keep their names)
    short: str = _quiet()  # in module and kernel names ("" for float32, whose names predate dtypes)
    header: str = _quiet()  # the CUDA header declaring the type ("" for the built-in ones)
    to_float: str = _quiet()  # device function widening a value to float ("": a float already)
    from_float: str = _quiet()  # device function rounding a float to the type, to nearest ("": none needed)
    tensor_map: str = _quiet()  # the copy engine's word for it (CU_TENSOR_MAP_DATA_TYPE_...)

    @property
    def torch(self) -> str:
        """Its Python spelling in a generated module."""
        return f"torch.{self.name}"


FLOAT32 = DType("float32", "float", "torch::kFloat", 4, tensor_map="FLOAT32")
FLOAT64 = DType("float64", "double", "torch::kDouble", 8, tensor_map="FLOAT64")
BFLOAT16 = DType("bfloat16", "__nv_bfloat16", "torch::kBFloat16", 2, short="bf16", header="cuda_bf16.h",
                 to_float="__bfloat162float", from_float="__float2bfloat16_rn", tensor_map="BFLOAT16")
FLOAT16 = DType("float16", "__half", "torch::kHalf", 2, short="f16", header="cuda_fp16.h", to_float="__half2float",
                from_float="__float2half_rn", tensor_map="FLOAT16")
DTYPES = {d.name: d for d in (FLOAT32, FLOAT64, BFLOAT16, FLOAT16)}
ELEMENTS = (FLOAT32.name, BFLOAT16.name, FLOAT16.name)  # what a module's tensors may hold (Spec.dtype)
AUTOCAST_TYPES = (BFLOAT16.name, FLOAT16.name)  # torch.autocast's CUDA types a float32 layer may run under


def dtype(name: str) -> DType:
    try:
        return DTYPES[name]
    except KeyError:
        raise KeyError(f"no element type {name!r} (fusegen/dtypes.py); known: {', '.join(DTYPES)}") from None
