"""The tuning table as data: fusegen/plan/tuning.json maps GPU name -> arithmetic (Spec.arithmetic) -> shape key
-> the winning tile (its engine and fields) and its times. The planner reads it here; `fusegen tune` (the
autotuner, in tools/tune.py) writes it."""
import dataclasses
import json
import pathlib

from ..dtypes import DTYPES
from ..spec import FP32, Spec

TABLE = pathlib.Path(__file__).resolve().parent / "tuning.json"


def _layer_key(spec: Spec) -> str:
    return f"i{spec.input_size}_h{spec.hidden_size}_g{spec.num_groups}_b"


def shape_key(spec: Spec, batch: int) -> str:
    return f"{_layer_key(spec)}{batch}"


def with_arithmetic(spec: Spec, arithmetic: str) -> Spec:
    """spec for one of the table's arithmetic keys (Spec.arithmetic): a 16-bit type's word sets the dtype,
    anything else the precision."""
    names = {d.short: d.name for d in DTYPES.values() if d.short}
    if arithmetic in names:
        return dataclasses.replace(spec, dtype=names[arithmetic])
    return dataclasses.replace(spec, precision=arithmetic)


def load_table(path=None) -> dict:
    path = pathlib.Path(path or TABLE)
    return json.loads(path.read_text()) if path.is_file() else {}


def _entries(spec: Spec, gpu: str, path=None) -> dict:
    """This layer's entries (any batch) for gpu and the spec's arithmetic: batch -> entry."""
    entries = load_table(path).get(gpu, {}).get(spec.arithmetic, {})
    prefix = _layer_key(spec)
    return {int(k[len(prefix):]): v for k, v in entries.items() if k.startswith(prefix)}


def tuned_gpus(spec: Spec, path=None) -> list:
    """The GPUs the table holds a tile for, for this layer and precision."""
    return sorted(gpu for gpu in load_table(path) if _entries(spec, gpu, path))


def _entry(spec: Spec, gpu: str, batch: int = None, path=None):
    entries = _entries(spec, gpu, path)
    if batch is not None:
        entries = {b: e for b, e in entries.items() if b == batch}
    return entries[max(entries)] if entries else None


def lookup(spec: Spec, gpu: str, batch: int = None, path=None):
    """(engine, tile fields) of the tuned tile for (gpu, precision, shape), or None. Without a batch, the entry
    of the largest batch."""
    entry = _entry(spec, gpu, batch, path)
    if entry is None:
        return None
    return entry.get("engine", "simt_fp32" if spec.precision == FP32 else "mma_tf32"), dict(entry["tile"])


def tuned_mainloop(spec: Spec, gpu: str, batch: int = None, path=None) -> str:
    """The mainloop the entry lookup() finds was timed on ("": an entry from before tune recorded it)."""
    entry = _entry(spec, gpu, batch, path)
    return entry.get("mainloop", "") if entry else ""
