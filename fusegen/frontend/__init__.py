"""The front end's face (`fusegen from-model`): read a model file's layer into a chain of stages (frontend/trace.py:
load, trace with torch.fx, match Linear -> stages or refuse) and the chain into a Spec that keeps the file's
constructor (frontend/interface.py)."""
from .interface import model_interface, model_spec, model_specs
from .trace import (GENERATED, REFUSED_WHY, STAGES, Chain, ModelError, check_interface, load_model_file, to_spec,
                    trace_chain, trace_file_layers, trace_layers, trace_model)

__all__ = ["trace_model", "trace_layers", "trace_file_layers", "trace_chain", "load_model_file", "ModelError", "Chain",
           "STAGES", "GENERATED", "REFUSED_WHY", "check_interface", "to_spec", "model_spec", "model_specs",
           "model_interface"]
