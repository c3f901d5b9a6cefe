"""The build runtime (runtime/jit.py): compiles a generated module's kernels into a torch extension once, caches
and loads it. Its source is embedded verbatim into every generated module (codegen/render.py reads it as text), so
jit.py imports only the standard library and torch, never the rest of fusegen."""
