"""Nsight Compute's source page (warp-state samples and instructions executed per SASS instruction) summed over
regions of one kernel's code: where a kernel's warps spend their samples, which stalls, and which instructions a
region executes.

    device: ncu --section SourceCounters --section WarpStateStats --import-source no -o rep ...
            ncu --import rep.ncu-rep --page source --csv --print-source sass > source.csv
    here:   python benchmarks/ncu_source_regions.py source.csv[.gz] --kernel forward_persistent \\
                --regions mainloop:720-fe0,epilogue:fe0-18000 [--per 2048] [--ops 30]

Regions are byte offsets (hex) from the kernel's first instruction, end excluded; read them off the listing
(--list prints every instruction with samples). --per divides the executed counts (e.g. by the warps x tiles that
run a region, for instructions a warp a tile)."""
import argparse
import collections
import csv
import gzip
import re

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def kernels(path):
    """{kernel name: (header, rows)} of an `ncu --page source --csv` export (one block per kernel)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    out, name = {}, None
    with opener(path, "rt") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                name = row[1]
                out[name] = [None, []]
            elif row[0] == "Address":
                out[name][0] = row
            elif name:
                out[name][1].append(row)
    return out


def opcode(source):
    source = re.sub(r"^@!?U?P\w+\s+", "", source.strip())  # the predicate
    return source.split()[0] if source else "?"


def summarize(header, rows, regions):
    """Per region (label, start, end offsets): samples, instructions executed, samples by stall reason, and
    executed instructions and samples by opcode."""
    ix = {c: i for i, c in enumerate(header)}
    stalls = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
    base = int(rows[0][0], 16)
    out = {}
    for label, start, end in regions:
        inside = [r for r in rows if start <= int(r[0], 16) - base < end]
        by_op, op_samples = collections.Counter(), collections.Counter()
        for r in inside:
            by_op[opcode(r[1])] += int(r[ix[EXECUTED]] or 0)
            op_samples[opcode(r[1])] += int(r[ix[SAMPLES]])
        out[label] = {"samples": sum(int(r[ix[SAMPLES]]) for r in inside),
                      "executed": sum(by_op.values()),
                      "stalls": collections.Counter({c[6:]: sum(int(r[ix[c]]) for r in inside) for c in stalls}),
                      "ops": by_op, "op_samples": op_samples}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--kernel", default="", help="a regular expression for the kernel's name (the first match)")
    ap.add_argument("--regions", default="", help="name:start-end,... hex byte offsets")
    ap.add_argument("--per", type=float, default=1.0, help="divide executed instructions by this")
    ap.add_argument("--ops", type=int, default=20, help="opcodes listed a region")
    ap.add_argument("--list", action="store_true", help="every instruction with samples, in order")
    args = ap.parse_args()
    found = kernels(args.csv)
    name = next(k for k in found if re.search(args.kernel, k))
    header, rows = found[name]
    ix = {c: i for i, c in enumerate(header)}
    total = sum(int(r[ix[SAMPLES]]) for r in rows)
    print(f"{name[:110]}\n{total} samples")
    if args.list:
        stalls = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
        base = int(rows[0][0], 16)
        for r in rows:
            if int(r[ix[SAMPLES]]):
                top = max(stalls, key=lambda c: int(r[ix[c]]))
                print(f"{int(r[0], 16) - base:6x} {int(r[ix[SAMPLES]]):6d} {r[ix[EXECUTED]]:>9} {top[6:]:16s} "
                      f"{r[1].strip()[:70]}")
    regions = [(n, *(int(v, 16) for v in span.split("-"))) for n, span in
               (part.split(":") for part in args.regions.split(",") if part)]
    for (label, start, end), r in zip(regions, summarize(header, rows, regions).values()):
        samples, executed = r["samples"], r["executed"]
        print(f"\n{label} [{start:x}, {end:x}): {samples} samples ({100 * samples / max(total, 1):.1f}%), "
              f"{executed / args.per:.1f} instructions executed (/ {args.per:g})")
        print("  stalls: " + ", ".join(f"{c} {100 * v / max(samples, 1):.0f}%" for c, v in r["stalls"].most_common(6)))
        for op, v in r["ops"].most_common(args.ops):
            print(f"  {op:24s} {v / args.per:9.1f}  {100 * v / max(executed, 1):5.1f}%  samples {r['op_samples'][op]}")


if __name__ == "__main__":
    main()
