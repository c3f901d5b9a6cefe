"""What the GPU runs, from the machine code: each kernel of built extensions (cuobjdump -sass) with its count of
instructions, tensor-core instructions by shape (HGMMA: wgmma; HMMA: mma.sync), FFMA, local-memory accesses
(LDL/STL: spills or stack arrays), TMA loads (UTMALDG) and cp.async copies (LDGSTS). The perf notes' SASS evidence.
--loops adds each kernel's longest loop (a backward branch's span): its instructions and their opcodes, for a
kernel bound by its instruction issue.

    device: PYTHONPATH=. python3 benchmarks/sass_report.py [--kernels REGEX] [--loops] EXTENSION.so ... > sass.md
"""
import argparse
import collections
import re
import subprocess
import sys

_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
# "/*0a30*/  @!P0 HGMMA.64x128x16.F32 R24, ..." -> HGMMA.64x128x16.F32 (a predicate guard skipped)
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)")
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


def parse(sass):
    """{(arch, mangled function): Counter of opcodes (HGMMA and HMMA with their shapes, others by base name)}."""
    out, arch, function = {}, "", None
    for line in sass.splitlines():
        m = re.match(r"^\s*code for (sm_\w+)", line)
        if m:
            arch = m.group(1)
            continue
        m = _FUNCTION.match(line)
        if m:
            function = out.setdefault((arch, m.group(1)), collections.Counter())
            continue
        m = _INSTRUCTION.match(line)
        if m and function is not None:
            op = m.group(1)
            base = op.split(".")[0]
            function[base] += 1
            if base in ("HGMMA", "HMMA"):
                function[op] += 1
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


_ADDRESSED = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BRANCH = re.compile(r"\bBRA\b.*?(0x[0-9a-f]+)")


def loops(sass, pattern=""):
    """{(arch, mangled function): (instructions, Counter of base opcodes)} of each function's longest loop: the
    instructions from a backward branch's target to the branch."""
    out, arch, function, code = {}, "", None, []

    def close():
        if function is None:
            return
        best = None
        for i, (addr, text) in enumerate(code):
            m = _BRANCH.search(text)
            if m and int(m.group(1), 16) < addr:
                body = [t for a, t in code[:i + 1] if a >= int(m.group(1), 16)]
                if best is None or len(body) > len(best):
                    best = body
        if best:
            ops = collections.Counter(re.sub(r"^@!?U?P[T0-9]+\s+", "", t).split()[0].split(".")[0] for t in best)
            out[(arch, function)] = (len(best), ops)

    for line in sass.splitlines():
        m = re.match(r"^\s*code for (sm_\w+)", line)
        if m:
            arch = m.group(1)
            continue
        m = _FUNCTION.match(line)
        if m:
            close()
            function, code = (m.group(1) if re.search(pattern, m.group(1)) else None), []
            continue
        m = _ADDRESSED.match(line)
        if m and function is not None:
            code.append((int(m.group(1), 16), m.group(2)))
    close()
    return out


def loop_table(found):
    rows = ["| arch | kernel | loop instructions | opcodes |", "|---|---|---|---|"]
    for (arch, mangled), (n, ops) in sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        rows.append(f"| {arch} | {kernel_name(mangled)} | {n} | " +
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
