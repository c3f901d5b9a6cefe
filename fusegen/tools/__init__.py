"""The command line (tools/cli.py) and the measuring tools apart from the library: the autotuner (tools/tune.py),
`fusegen check` and `fusegen bench` (tools/measure.py), the accuracy bar (tools/accuracy.py). They may import any
part of fusegen; nothing in the library imports them."""
