"""Summarize a FUSEGEN_ACCURACY_LOG file (one JSON line per comparison, from the GPU tests): per precision and
the engine that ran, how many checks, of which group strategies and input distributions, and the worst ratios of
our error to the fp32 reference's, normwise and element-wise (tf32 is judged by its own tolerance, so its ratios
are expected in the hundreds)."""
import collections
import json
import sys

FLOOR = 2.5e-7  # ratios against an fp32 reference error below this say little


def main(path):
    rows = [json.loads(line) for line in open(path)]
    groups = collections.defaultdict(list)
    for r in rows:
        groups[r.get("precision", "3xtf32"), r.get("engine", "?")].append(r)
    print(f"{len(rows)} comparisons")
    print(f"{'precision':9} {'engine':36} {'checks':>6} {'kink flips ours/ref':>20} {'worst normwise':>15} "
          f"{'worst elementwise':>18}  strategies; distributions")
    for (precision, engine), rs in sorted(groups.items()):
        flips = [sum(r.get("kink_flips", (0, 0))[i] for r in rs) for i in (0, 1)]
        norm = worst(rs, lambda r: {k: v for k, v in r.items() if is_pair(v) and k != "kink_flips"})
        elem = worst(rs, lambda r: r.get("elementwise", {}))
        strategies = ",".join(sorted({r.get("strategy", "?") for r in rs}))
        dists = ",".join(sorted({r.get("dist", "rand") for r in rs}))
        print(f"{precision:9} {engine:36} {len(rs):6} {flips[0]:>9}/{flips[1]:<10} {norm[0]:15.2f} {elem[0]:18.2f}"
              f"  {strategies}; {dists}")
    print("\nworst cases (ratio, tensor, case):")
    for (precision, engine), rs in sorted(groups.items()):
        for what, pick in (("normwise", lambda r: {k: v for k, v in r.items() if is_pair(v) and k != "kink_flips"}),
                           ("elementwise", lambda r: r.get("elementwise", {}))):
            ratio, name, r = worst(rs, pick)
            print(f"  {precision} {engine} {what}: {ratio:.2f} {name} {case(r)}")


def is_pair(v):
    return isinstance(v, list) and len(v) == 2 and all(isinstance(t, (int, float)) for t in v)


def worst(rs, pick):
    """(ratio, tensor, row) of the largest ours / max(fp32 reference's, FLOOR) over rows and tensors."""
    best = (0.0, "", {})
    for r in rs:
        for name, (ours, ref) in pick(r).items():
            ratio = ours / max(ref, FLOOR)
            if ratio > best[0]:
                best = (ratio, name, r)
    return best


def case(r):
    what = r.get("chain") or f"spec {tuple(r.get('spec', ()))}"
    return f"{what}, batch {r.get('batch')}, seed {r.get('seed')}, {r.get('dist', 'rand')}, {r.get('strategy')}"


if __name__ == "__main__":
    main(sys.argv[1])
