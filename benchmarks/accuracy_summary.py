"""Summarize a FUSEGEN_ACCURACY_LOG file: per precision and tensor, the worst ratio of our error to the fp32
reference's (tf32 is judged by its own tolerance, so its ratios are expected in the hundreds)."""
import json
import sys

NAMES = ("out", "grad_x", "grad_fc.weight", "grad_fc.bias", "grad_gn.weight", "grad_gn.bias")


def main(path):
    everything = [json.loads(line) for line in open(path)]
    for precision in sorted({r.get("precision", "fp32") for r in everything}):
        summarize(precision, [r for r in everything if r.get("precision", "fp32") == precision])


def summarize(precision, rows):
    print(f"{precision}: {len(rows)} comparisons; kink flips taken (ours/fp32 ref): "
          f"{sum(r['kink_flips'][0] for r in rows)}/{sum(r['kink_flips'][1] for r in rows)}; output elements outside "
          f"allclose of the fp32 reference where ours is closer to fp64: {sum(r.get('allclose_exceptions', 0) for r in rows)}")
    print(f"{'tensor':16} {'worst ours/ref':>15} {'median':>8} {'worst case (input, hidden, groups, batch)':>45}")
    for name in NAMES:
        ratios = sorted(((r[name][0] / max(r[name][1], 2.5e-7), r) for r in rows), key=lambda t: t[0])
        if not ratios:
            continue
        worst, case = ratios[-1]
        med = ratios[len(ratios) // 2][0]
        print(f"{name:16} {worst:15.2f} {med:8.2f} {str(tuple(case['spec']) + (case['batch'],)):>45}")


if __name__ == "__main__":
    main(sys.argv[1])
