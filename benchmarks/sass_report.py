"""What the GPU runs, from the machine code: each kernel of built extensions (cuobjdump -sass) with its count of
instructions, tensor-core instructions by shape (HGMMA: wgmma; HMMA: mma.sync), FFMA, local-memory accesses
(LDL/STL: spills or stack arrays), TMA loads (UTMALDG) and cp.async copies (LDGSTS). The perf notes' SASS evidence.
--loops adds each backward branch's span (a loop, or a slow path's jump back): its instructions and their opcodes,
for a kernel bound by its instruction issue.

    device: PYTHONPATH=. python3 benchmarks/sass_report.py [--kernels REGEX] [--loops] EXTENSION.so ... > sass.md
"""
import argparse
import collections
import re
import subprocess
import sys

_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
# "/*0a30*/  @!P0 HGMMA.64x128x16.F32 R24, ..." -> HGMMA.64x128x16.F32 (a predicate guard skipped)
COLUMNS = ("HGMMA", "HMMA", "FFMA", "LDL", "STL", "UTMALDG", "LDGSTS")


def kernel_name(mangled):
    """fg's kernel identifier from an Itanium-mangled name (_ZN2fg20wgmma_forward_kernel...: wgmma_forward_kernel),
    with its template arguments' mangled tail kept short; other names as they come."""
    m = re.match(r"_ZN2fg(\d+)", mangled)
    if not m:
        return mangled
    start = m.end()
    name = mangled[start:start + int(m.group(1))]
    tail = mangled[start + int(m.group(1)):]
    return f"{name}<{tail[1:-1][:40]}>" if tail.startswith("I") else name


_ADDRESSED = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BRANCH = re.compile(r"\bBRA\b.*?(0x[0-9a-f]+)")


def functions(sass):
    """(arch, mangled function, [(address, instruction text)]) for each function of cuobjdump -sass output."""
    arch, function, code = "", None, []
    for line in sass.splitlines():
        m = re.match(r"^\s*code for (sm_\w+)", line)
        if m:
            arch = m.group(1)
            continue
        m = _FUNCTION.match(line)
        if m:
            if function is not None:
                yield arch, function, code
            function, code = m.group(1), []
            continue
        m = _ADDRESSED.match(line)
        if m and function is not None:
            code.append((int(m.group(1), 16), m.group(2)))
    if function is not None:
        yield arch, function, code


def _opcode(text):
    """'@!P0 HGMMA.64x128x16.F32 R24, ...' -> 'HGMMA.64x128x16.F32' (a predicate guard skipped)."""
    return re.sub(r"^@!?U?P[T0-9]+\s+", "", text).split()[0]


def parse(sass):
    """{(arch, mangled function): Counter of opcodes (HGMMA and HMMA with their shapes, others by base name)}."""
    out = {}
    for arch, function, code in functions(sass):
        ops = out.setdefault((arch, function), collections.Counter())
        for _, text in code:
            op = _opcode(text)
            base = op.split(".")[0]
            ops[base] += 1
            if base in ("HGMMA", "HMMA"):
                ops[op] += 1
    return out


def table(functions, pattern=""):
    """A markdown table: a row per function whose name matches pattern."""
    rows = ["| arch | kernel | instructions | " + " | ".join(COLUMNS) + " | tensor-core shapes |",
            "|---|---|---|" + "---|" * len(COLUMNS) + "---|"]
    for (arch, mangled), ops in sorted(functions.items(), key=lambda kv: (kv[0][0], kernel_name(kv[0][1]))):
        if pattern and not re.search(pattern, mangled):
            continue
        shapes = ", ".join(f"{op} x{n}" for op, n in sorted(ops.items()) if "." in op)
        total = sum(n for op, n in ops.items() if "." not in op)
        rows.append(f"| {arch} | {kernel_name(mangled)} | {total} | " + " | ".join(str(ops[c]) for c in COLUMNS) +
                    f" | {shapes} |")
    return "\n".join(rows)


def loops(sass, pattern=""):
    """{(arch, mangled function): [(first address, last address, instructions, Counter of base opcodes)]}: every
    backward branch's span (its target to the branch) in the functions whose names match pattern. A span can hold
    an inner loop or a slow path's return jump: read the addresses against the SASS."""
    out = {}
    for arch, function, code in functions(sass):
        if not re.search(pattern, function):
            continue
        for addr, text in code:
            m = _BRANCH.search(text)
            if m and int(m.group(1), 16) < addr:
                start = int(m.group(1), 16)
                body = [t for a, t in code if start <= a <= addr]
                ops = collections.Counter(_opcode(t).split(".")[0] for t in body)
                out.setdefault((arch, function), []).append((start, addr, len(body), ops))
    return out


def loop_table(found):
    rows = ["| arch | kernel | span | instructions | opcodes |", "|---|---|---|---|---|"]
    for (arch, mangled), spans in sorted(found.items()):
        for start, end, n, ops in spans:
            rows.append(f"| {arch} | {kernel_name(mangled)} | {start:#06x}-{end:#06x} | {n} | " +
                        ", ".join(f"{op} {k}" for op, k in ops.most_common()) + " |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="built extensions (.so) or cubins")
    ap.add_argument("--kernels", default="", help="a regular expression the mangled names must match")
    ap.add_argument("--loops", action="store_true", help="also each kernel's longest loop, by opcode")
    args = ap.parse_args()
    for f in args.files:
        sass = subprocess.run(["cuobjdump", "-sass", f], capture_output=True, text=True, check=True).stdout
        print(f"## {f}\n\n{table(parse(sass), args.kernels)}\n")
        if args.loops:
            print(f"{loop_table(loops(sass, args.kernels))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
