"""What a rendered module does and why, in words: embedded in its docstring, written beside it as <name>.md,
printed by `fusegen explain`. Expected speed comes from a roofline model of the plan and, where
benchmarks/results/ holds a run for that GPU and layer, the measured figure."""
import json
import pathlib
import textwrap

from ..ops import chain_title, op
from ..plan import COLS, FRAGMENT, NO_NORM, ROWS, TILE_LOCAL, TWO_STAGE, Plan, RowSumPlan
from ..spec import FP32, TF32, TF32X3

RESULTS_DIR = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "results"

# Datasheet peaks, TFLOP/s (dense) and TB/s, of GPUs we model; the fp32 column is also PyTorch's default path
# (cuBLAS SGEMM reaches ~75% of it: 51 of 67 measured on the H200, ../shared/reference/h200_baselines.md).
PEAKS = {
    "H200": dict(fp32=67.0, tf32=495.0, bandwidth=4.8),
    "H100": dict(fp32=67.0, tf32=495.0, bandwidth=3.35),
    "A100": dict(fp32=19.5, tf32=156.0, bandwidth=2.0),
}
SGEMM_EFFICIENCY = 0.75

PRECISION_WORDS = {
    TF32X3: "3xTF32 on tensor cores: each fp32 operand split into a big and small part ({parts}), three products "
            "per multiply-add, running sums promoted into fp32 every "
            "{promote} of K. Accuracy of fp32 (passes allclose(1e-4, 1e-4) against the fp32 PyTorch reference; "
            "error against fp64 below the reference's own).",
    TF32: "TF32 on tensor cores: operands rounded to TF32 (10-bit mantissa), one product. About 3e-4 relative "
          "error: it FAILS allclose(1e-4, 1e-4) against the fp32 reference. Opt-in speed over accuracy.",
    FP32: "plain fp32 FFMA with two-level sums (chains restart every {promote} of K): as accurate as PyTorch's "
          "fp32, on any GPU, at SIMT speed.",
    "bf16": "bfloat16 operands on tensor cores, one product (exact in fp32), fp32 sums {sums}; the epilogue in "
            "fp32 on values rounded to bfloat16 where PyTorch rounds them (the Linear's output, each stage's), so "
            "the output lands within allclose of eager bfloat16's.",
    "f16": "float16 operands on tensor cores, one product (exact in fp32), fp32 sums {sums}; the epilogue in fp32 "
           "on values rounded to float16 where PyTorch rounds them (the Linear's output, each stage's), so the "
           "output lands within allclose of eager float16's.",
}
def _weight_plane_bytes(plan) -> int:
    """The kept weight planes' buffer in bytes: launchers' weight_plane_floats in Python (operand_scale's
    plane_floats: fp16 rows padded to 8 elements, in 16-byte units, a float scale a row twice over, padded to 256;
    then FINGERPRINT words and FINGERPRINT_BLOCKS flags). tests/test_spec_plan_render.py checks it against the
    rendered constants."""
    n, k = plan.spec.hidden_size, plan.spec.input_size
    planes = -(-(plan.pieces * n * (-(-k // 8) * 8) * 2) // 16) * 4
    return 4 * (planes + 2 * (-(-n // 256) * 256) + 8192 + 8)


def _weight_plane_words(plan) -> str:
    """The scaled weight planes' size in words."""
    n, k, pieces = plan.spec.hidden_size, plan.spec.input_size, plan.pieces
    planes = "two planes (hi and lo) of " if pieces == 2 else ""
    share = "as much as the weight" if pieces == 2 else "half the weight's"
    return (f"{planes}{n} x {k} fp16 values and {n} scales ({_weight_plane_bytes(plan) / 2 ** 20:.1f} MiB at these "
            f"sizes, {share})")


def _x_planes_words(plan) -> str:
    """Where x's planes live: made by forward, kept for grad_weight in training (Plan.keeps_x_planes)."""
    row = plan.pieces * (-(-plan.spec.input_size // 8) * 8) * 2 + 8  # fp16 values and 2 floats a row (scales)
    if not plan.keeps_x_planes:
        return "x's planes are made per call in scratch"
    return (f"x's planes are made by forward and, in training, kept beside autograd's saved tensors for grad_weight "
            f"({row / 1024:.1f} KiB a batch row, {1024 * row / 2 ** 20:.0f} MiB at batch 1024; under torch.compile "
            "grad_weight makes them again)")


ENGINE_WORDS = {
    "wgmma_tf32": "sm_90a `wgmma` (TMA bulk copies into a ring of shared-memory stages, one producer warp, two "
                  "consumer warpgroups; the weight is split in registers, x / dz once per call into TF32 "
                  "planes); operands the copy engine cannot read run on the mma.sync engine",
    "mma_tf32": "`mma.sync` m16n8k8 (sm_80+), multi-stage cp.async pipeline",
    "wgmma_bf16": "sm_90a `wgmma` k16 bf16 (TMA bulk copies into a ring of shared-memory stages, one producer "
                  "warp, two consumer warpgroups; x and dz read in place, dz row-contiguous for dW (wgmma's B "
                  "N-major: no transpose pass); the weight's fragments by ldmatrix); the backward GEMMs persistent "
                  "(a block an SM walks its output tiles, the producer loading the next tile's stages during the "
                  "store) and their whole tiles written through a small shared-memory stage in 16-byte row pieces; "
                  "operands the copy engine cannot read run on the mma.sync engine",
    "wgmma_f16": "sm_90a `wgmma` k16 f16, as the bf16 one",
    "wgmma_f16s": "sm_90a `wgmma` k16 f16 over scaled fp16 planes of the fp32 operands, x's and dz's made per "
                  "call, the weight's once per version (each row divided by a power of two that puts its largest "
                  "element in fp16's top binade: every row keeps "
                  "TF32's 11 significant bits at fp32's range; the outputs multiplied back by the scales before "
                  "the epilogue), at twice TF32 wgmma's rate; the bf16 engine's ring, persistent backward GEMMs "
                  "and output stage; small GEMMs run the mma.sync TF32 engine",
    "wgmma_3xf16s": "sm_90a `wgmma` k16 f16 over two scaled fp16 planes of each fp32 operand (hi, and lo the rest "
                    "to fp16, one power-of-two scale a row as the tf32 engine's: 22 significant bits), three "
                    "products a k16 step (the small ones first), sums promoted into fp32 every 64 of K; x's and "
                    "dz's planes made per call, the weight's once per version; twice the 3xTF32 engine's rate; "
                    "small GEMMs run the mma.sync 3xTF32 engine",
    "mma_3xf16s": "`mma.sync` m16n8k16 f16 (sm_80+) over two scaled fp16 planes of each fp32 operand (as the "
                  "sm_90 3xfp16 engine's: hi and lo, one power-of-two scale a row), three products a k16 step (the "
                  "small ones first), sums promoted into fp32 every 64 of K; x's and dz's planes made per call, the "
                  "weight's once per version; about 1.7x the mma.sync 3xTF32 engine's GEMM rate (measured on an "
                  "H100's mma.sync; the headline layer's step 0.58x the 3xTF32 engine's); small and unaligned GEMMs "
                  "run the mma.sync 3xTF32 engine. --planes off (plan(scaled_planes=False)) keeps 3xTF32",
    "mma_bf16": "`mma.sync` m16n8k16 bf16 (sm_80+), multi-stage cp.async pipeline",
    "mma_f16": "`mma.sync` m16n8k16 f16 (sm_80+), multi-stage cp.async pipeline",
    "simt_fp32": "SIMT FFMA (any GPU)",
}
STRATEGY_WORDS = {
    FRAGMENT: "statistics on the accumulator fragments in registers (a group's channels sit in a few lanes: "
              "adds and shuffles), output written once",
    TILE_LOCAL: "statistics in the GEMM epilogue through shared memory (a group fits the output tile), output "
                "written once",
    TWO_STAGE: "two-stage: the GEMM epilogue writes z and per-tile partial statistics, a normalize kernel merges "
               "them (a group of {gw} channels spans up to {pieces} tiles)",
    NO_NORM: "none in the chain: every stage is element-wise and runs on each accumulator as it is stored",
    ROWS: "none; row reductions: the GEMM epilogue writes z, then a row kernel walks each row, one pass per "
          "reduction (the element-wise stages recomputed from z) and one for the output; backward one pass per "
          "row sum its gradient needs, then dz",
    COLS: "none; a BatchNorm: the GEMM epilogue writes z, then a column kernel gives each block 32 whole columns: "
          "a pass for the mean, one for the variance (two-pass, float64), the running statistics updated in "
          "training, one for the output; backward a pass for the column sums of g and g x_hat, then dz and the "
          "parameters' sums",
}
# a GroupNorm beside row reductions
GROUP_ON_ROWS = ("one of the row reductions ({gw} channels a group): the row kernel's pass over the row gives each "
                 "group its mean, a second its variance (float64), later passes normalize with them; backward a "
                 "pass for each group's sums of g gamma and g gamma x_hat")


def _peaks(gpu: str):
    return next((v for k, v in PEAKS.items() if gpu and k in gpu), None)


def _measured(plan: Plan, gpu: str):
    """The benchmark row for this layer and precision on gpu, with eager and torch.compile, or None."""
    if not gpu or plan.spec.stages:  # benchmarks/results holds the headline layer only
        return None
    path = RESULTS_DIR / (gpu.lower().replace(" ", "-") + ".json")
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    s = plan.spec
    if (data.get("input_size"), data.get("hidden_size"), data.get("num_groups")) != \
            (s.input_size, s.hidden_size, s.num_groups):
        return None
    rows = {r["impl"]: r for r in data.get("rows", [])}
    ours = rows.get(f"fusegen {plan.precision}")
    return (ours, rows.get("pytorch eager"), rows.get("torch.compile"), data) if ours else None


def roofline(plan: Plan, gpu: str, batch: int = 1024):
    """(ours, pytorch) modeled forward times in ms at the peaks of gpu, or None for a GPU we do not model."""
    peaks = _peaks(gpu)
    if peaks is None:
        return None
    s = plan.spec
    flop = 2.0 * batch * s.hidden_size * s.input_size
    half = 2 * peaks["tf32"]  # (the 16-bit types run twice TF32's rate on these GPUs)
    rate = {TF32X3: peaks["tf32"] / 3, TF32: peaks["tf32"], FP32: peaks["fp32"], "bf16": half, "f16": half}[
        plan.precision]
    if plan.mainloop == "simt_fp32":
        rate = peaks["fp32"]
    # bytes: x, W, out (forward, fp32); memory only bounds tiny layers
    nbytes = plan.element.bytes * (batch * s.input_size + s.hidden_size * s.input_size + batch * s.hidden_size)
    ours = max(flop / (rate * 1e12), nbytes / (peaks["bandwidth"] * 1e12)) * 1e3
    # PyTorch's GEMM in the layer's own type: cuBLAS at SGEMM_EFFICIENCY of that type's peak
    theirs_rate = peaks["fp32"] if plan.element.bytes == 4 else half
    theirs = max(flop / (theirs_rate * SGEMM_EFFICIENCY * 1e12), nbytes * 3 / (peaks["bandwidth"] * 1e12)) * 1e3
    return ours, theirs


def explain(plan: Plan, gpu: str = None, batch: int = 1024) -> str:
    """Markdown explanation of plan (gpu: the GPU to model; default the one the plan was tuned on)."""
    if isinstance(plan, RowSumPlan):
        return _explain_row_sum(plan, batch)
    s = plan.spec
    gpu = gpu or plan.tuned_for
    promote = plan.promote_every_k or "(never)"
    lines = [f"# {plan.module_name}: fused {_layer_title(plan)}", "", "## What it replaces"]
    if not s.stages:
        lines.append(
            f"`nn.Linear({s.input_size}, {s.hidden_size})`, `nn.GroupNorm({s.num_groups}, {s.hidden_size}, "
            f"eps={s.eps})`, `nn.LeakyReLU({s.negative_slope})` and `x + x`. PyTorch runs them as a GEMM plus three "
            "element-wise or normalization kernels, each a round trip of the (batch, hidden) activations through "
            "memory, and the backward likewise. Here one GEMM kernel applies bias, GroupNorm, LeakyReLU and the "
            "doubling in its epilogue and writes the output once; backward is " +
            ("one pass for dz and the parameters' column sums (per chunk of rows, added in a fixed order by a "
             "small kernel)" if plan.gn_backward_one_pass else "one kernel for dz, one for the parameter column "
             "sums") + ", and the two GEMMs.")
    else:
        pool = plan.weight_pool
        lines.append(
            f"The layer of {s.interface.source if s.interface else 'the spec'}: a Linear ({s.input_size} -> "
            f"{pool.hidden_in if pool else s.hidden_size}{', with bias' if s.bias else ', no bias'}) then " +
            (f"{pool.title} (run as the Linear pooled: {s.input_size} -> {s.hidden_size}, see the rewrites) and "
             if pool else "") +
            f"{len([st for st in s.chain if st.kind != 'identity'])} stage(s). PyTorch runs "
            "a GEMM plus one kernel per stage, each a round trip of the (batch, hidden) activations through memory, "
            "and the backward likewise. Here " + (
                "the GEMM's epilogue writes z and one row kernel applies the chain (a pass per reduction) and "
                "writes the output once" if plan.group_strategy == ROWS else
                "the GEMM's epilogue writes z and one column kernel computes the BatchNorm's statistics, updates "
                "its running statistics in training and writes the output once" if plan.group_strategy == COLS else
                "the GEMM's epilogue applies the whole chain and writes the output once") + "; backward recomputes the stages from the saved GEMM output (nothing else is stored), one kernel "
            f"for dz{' (two with the GroupNorm)' if plan.gn_index >= 0 and not plan.gn_backward_one_pass else ''} "
            "and the parameter column sums, then "
            "the two GEMMs.")
    if plan.rewrites:
        lines += ["", "## Rewrites that fired"] + [f"- {w}" for w in plan.rewrites]
    lines += [
        "",
        "## How",
        "- Precision `{}`: {}".format(plan.precision, PRECISION_WORDS[plan.precision].format(
            promote=promote, sums=f"promoted every {promote} of K" if plan.promote_every_k else "over all of K",
            parts="two fp16 planes of one power-of-two scale a row; TF32 parts for the small GEMMs" if plan.scaled
            else "TF32, both rounded to nearest")),
        *([f"- Under torch.autocast({plan.operand.name}) only: float32 parameters and input, converted to "
           f"{plan.operand.name} by our kernel for the GEMMs; each value after the Linear in the type autocast gives "
           f"it; the output {plan.output.name}" + (" (it feeds the next fused layer: float32 holding the values autocast "
                                                  "rounds, which that layer converts back exactly)"
                                                  if plan.feeds_layer else "") +
           ", the gradients float32."] if plan.converts else []),
        f"- GEMM engine `{plan.mainloop}`: {ENGINE_WORDS[plan.mainloop]}; tile {plan.tile.name} "
        f"({plan.tile.threads} threads{', tuned on ' + plan.tuned_for if plan.tuned_for else ''}); each call picks "
        "its schedule from the sizes (" +
        (f"few-rows FFMA engines for batches of at most {plan.gemv_max_rows}: a GEMV, and grad_weight as an "
         "outer product; " if plan.gemv_max_rows else "") +
        "a narrow tile for small batches, split-K to fill the GPU)" +
        (f"; GEMMs of at most {plan.exact_max_macs:,} multiply-adds run a compensated fp32 mainloop (small "
         "problems, where a few ill-conditioned values decide the error)" if plan.exact_max_macs else
         f"; tiny GEMMs (at most {plan.exact_max_tile_macs:,} multiply-adds in whole tiles) and, after a "
         f"GroupNorm, grad_input of layers of at most {plan.exact_dx_max_input} inputs run a compensated fp32 "
         "mainloop" if plan.exact_max_tile_macs else "") + ".",
        (f"- GroupNorm ({s.group_width} channels a group): " if plan.group_strategy not in (NO_NORM, ROWS, COLS)
         else "- GroupNorm: ")
        + (GROUP_ON_ROWS.format(gw=s.group_width) if plan.row_group_width else
           STRATEGY_WORDS[plan.group_strategy].format(gw=s.group_width, pieces=plan.pieces_per_group)) + ".",
        *([f"- {op(s.chain[0].kind).title_of(s.chain[0])}: the GEMM writes z at the Linear's {s.hidden_size} "
           f"outputs, the row kernels read each of the {s.features} windows' " +
           ("maximum of it as the chain's first value; backward sends each window's gradient to the element "
            "torch's max_pool1d takes (the first maximum, a NaN over anything), summed where windows overlap"
            if plan.row_pool.kind == "max_pool" else
            f"average of it (z as the {plan.operand.name} reference holds it, summed in fp32) as the chain's first "
            "value; backward gives each z column its windows' gradients over their divisors") +
           ", and the bias's gradient sums dz at the Linear's width."] if plan.row_pool else []),
        *([f"- Memory: the weight's fp16 plane{'s' if plan.pieces == 2 else ''}, {_weight_plane_words(plan)}, is made once per version of the weight "
           "(an optimizer step, load_state_dict or an in-place write makes a new one; so does a write through "
           "`.data` that changes one of the 8192 elements each call compares on the GPU; after a smaller one, call "
           "the module's clear_weight_planes()) and kept on the GPU beside it, for up to 8 weights a "
           f"build; {_x_planes_words(plan)}; dz's planes are made per call in scratch."] if plan.scaled else []),
        "- Sizes: input and hidden " + ("compiled in" if plan.fixed_sizes else "passed at run time") +
        "; any batch. Backward reads z (the GEMM output, kept in training)" +
        (" and the group statistics (float64" + ((", computed in fp32: z carries TF32's rounding" if plan.scaled else
                                                   ", computed in fp32 as the 16-bit reference does")
                                                  if plan.statistics.name == "float32" else "") + ")."
         if plan.gn_index >= 0 else
         " and the row reductions' statistics (float64)." if plan.group_strategy == ROWS else
         " and the BatchNorm's per-channel mean and rstd (float64)." if plan.group_strategy == COLS else "."),
        "",
        "## Expected speed",
    ]
    model = roofline(plan, gpu, batch)
    if model:
        ours, theirs = model
        theirs_gemm, theirs_kind = ("fp32 GEMM", "SGEMM") if plan.element.bytes == 4 else (
            f"{plan.element.name} GEMM", plan.element.name)
        lines.append(f"- Roofline on {gpu} at batch {batch}: forward >= {ours:.2f} ms at the {plan.precision} "
                     f"peak; PyTorch's {theirs_gemm} ~{theirs:.2f} ms at cuBLAS's {theirs_kind} rate: at most "
                     f"{theirs / ours:.1f}x (forward+backward: three GEMMs each side, the same ratio).")
    else:
        lines.append(f"- Roofline: {2 * batch * s.hidden_size * s.input_size / 1e9:.1f} GFLOP per GEMM at batch "
                     f"{batch} (three for forward+backward); no peak figures for "
                     f"{gpu or 'an unnamed GPU'} (modeled: {', '.join(PEAKS)}).")
    measured = _measured(plan, gpu)
    if measured:
        ours, eager, compiled, data = measured
        text = (f"- Measured on {data['gpu']} (benchmarks/results, batch {data['batch']}, {data['date']}): forward "
                f"{ours['forward_ms']:.3f} ms, forward+backward {ours['forward_backward_ms']:.3f} ms")
        for name, row in (("eager", eager), ("torch.compile", compiled)):
            if row:
                text += (f"; {row['forward_ms'] / ours['forward_ms']:.2f}x / "
                         f"{row['forward_backward_ms'] / ours['forward_backward_ms']:.2f}x vs {name}")
        lines.append(text + ".")
    else:
        lines.append("- Measured: no benchmark of this layer on this GPU in benchmarks/results "
                     "(`fusegen bench` measures it).")
    lines += [
        "",
        "## Trade-offs and limits",
        {TF32X3: "- fp32-accurate, 3 tensor-core products per multiply-add (a third of the TF32 rate)." + (
            " Here the parts are fp16 planes of one power-of-two scale a row (3xFP16: a third of fp16's rate, "
            "twice 3xTF32's on wgmma, ~1.7x on mma.sync); the weight's split rounds its big part toward zero so "
            "that an Inf of x meets parts of one sign (Inf and NaN as the reference's), at one bit of the weight's 22; an element more than "
            "2^27 below its row's largest keeps fewer bits (fp16's subnormals)." if plan.scaled else ""),
         TF32: "- Fastest, but ~3e-4 relative error: not a drop-in where results are compared at 1e-4." + (
             " On sm_90 the operands are fp16 planes with a power-of-two scale a row: TF32's significand; an "
             "element more than 2^28 below its row's largest keeps fewer bits (fp16's subnormals), where TF32 "
             "keeps them to fp32's range." if plan.scaled else ""),
         FP32: "- Portable and exact to fp32, at SIMT speed (slower than cuBLAS's SGEMM on big layers).",
         "bf16": "- bfloat16 accuracy (8-bit significand), as the reference in bfloat16. Speed (H200, 1024 x "
                 "8192, 256 x 128 tiles): the wgmma engine's GEMMs at 560-740 TFLOP/s alone (the forward's with "
                 "its GroupNorm epilogue 600); 0.23 / 0.86 ms forward / forward+backward against eager's 0.57 / "
                 "1.49 and torch.compile's 0.20 / 1.32 (session 15); the mma.sync engine (sm_80, and sm_90 where "
                 "wgmma cannot read the operands) at 190-245.",
         "f16": "- float16 accuracy (11-bit significand, range to 65504), as the reference in float16. Speed as "
                "bfloat16's (H200, 1024 x 8192: 0.22 / 0.91 ms)."}[
            plan.precision],
        "- GPUs: " + {"wgmma_tf32": "sm_90 only (H100/H200; built for sm_90a); render with --arch 8.0 for others.",
                      "wgmma_bf16": "sm_90 only (H100/H200; built for sm_90a); render with --arch 8.0 for others.",
                      "wgmma_f16": "sm_90 only (H100/H200; built for sm_90a); render with --arch 8.0 for others.",
                      "wgmma_f16s": "sm_90 only (H100/H200; built for sm_90a); render with --arch 8.0 for others.",
                      "wgmma_3xf16s": "sm_90 only (H100/H200; built for sm_90a); render with --arch 8.0 for others.",
                      "mma_tf32": "sm_80 or newer.", "mma_bf16": "sm_80 or newer.", "mma_f16": "sm_80 or newer.",
                      "mma_3xf16s": "sm_80 or newer.",
                      "simt_fp32": "any CUDA GPU with 81 KB of shared memory a block (not sm_75)."}[plan.mainloop],
        "- Input: {0} CUDA (batch, {1}), any strides; {0} parameters on the same GPU.".format(plan.element.name,
                                                                                             s.input_size),
        "- Compile time: the first forward builds the kernels with nvcc (20-60 s), cached in FUSEGEN_CACHE_DIR "
        "(default ~/.cache/fusegen) for later processes.",
    ]
    if plan.seeded:
        lines.append("- Dropout: the masks come from fusegen's own Philox4x32-10 stream (an element's place and the "
                     "call's seed, drawn from torch's CPU generator: torch.manual_seed repeats a run), recomputed in "
                     "backward, never stored. Same keep rate and scaling as torch's, but not torch's bits: no module "
                     "can reproduce those, so a comparison with the reference in training needs the same mask on both "
                     "(tests/helpers.py recomputes ours). In eval the dropouts that follow a mode are identities.")
    lines.append("")
    return "\n".join(_wrap(line) for line in lines)


def _explain_row_sum(plan: RowSumPlan, batch: int) -> str:
    """The row-sum rewrite's explanation: what fired, how it computes, what it costs."""
    s = plan.spec
    weight_mb = 4 * s.input_size * s.hidden_size / 1e6
    lines = [
        f"# {plan.module_name}: {_layer_title(plan)}, rewritten", "", "## What it replaces",
        f"The layer of {s.interface.source}: a Linear ({s.input_size} -> {s.hidden_size}"
        f"{', with bias' if s.bias else ', no bias'}) whose chain {'averages' if plan.mean else 'sums'} each row "
        "right after stages affine per channel. PyTorch runs the GEMM "
        f"({2 * batch * s.input_size * s.hidden_size / 1e9:.1f} GFLOP at batch {batch}) and then reduces what it "
        "wrote.", "", "## Rewrites that fired",
        f"- {plan.rewrites[0]}: sum_j (alpha_j (x . W_j) + beta_j) = x . (sum_j alpha_j W_j) + sum_j beta_j, "
        "alpha_j and beta_j the head's affine map of channel j (" +
        (", ".join(op(st.kind).title_of(spec_st) for st, spec_st in zip(plan.head, s.chain)) or "none") +
        ", with the Linear's bias).", *[f"- {w}" for w in plan.rewrites[1:]],
        "", "## How",
        f"- Once per weight update (the parameters' version counters key a cache): one pass over W "
        f"({weight_mb:.0f} MB) for w_eff, in double, in a fixed order.",
        f"- Each call: a block a row reads x once ({4 * batch * s.input_size / 1e6:.0f} MB at batch {batch}), "
        "its dot product with w_eff in double" + (", divided by the width (the mean)" if plan.mean else "") +
        ", then the tail (" + (", ".join(op(s.chain[st.index].kind).title_of(s.chain[st.index])
                                         for st in plan.tail) or "nothing") + ") in fp32.",
        "- Backward: the row value's gradient gz through the tail; dx = gz (x) w_eff; x^T gz in double; dW = "
        "alpha (x) x^T gz (dense, as the reference's); the bias's and the head parameters' gradients through the "
        "head in reverse" + (f" (a parameter scales: one more pass over W, {weight_mb:.0f} MB)"
                             if plan.head_scales_by_param else "") + ".",
        "- Sums in double: the value is nearer fp64 than the reference's fp32 GEMM and fp32 row sum.", "",
        "## Trade-offs and limits",
        f"- {plan.element.name} tensors, without autocast (the sums in double, each result rounded to "
        f"{plan.element.name} once); any CUDA GPU{' of sm_80 or newer' if plan.element.short else ''} (fp64 FFMA, "
        "memory-bound).",
        f"- Input: {plan.element.name} CUDA (batch, {s.input_size}), any strides.",
        "- Compile time: the first forward builds the kernels with nvcc, cached in FUSEGEN_CACHE_DIR.", "",
    ]
    return "\n".join(_wrap(line) for line in lines)


def _layer_title(plan: Plan) -> str:
    return chain_title(plan.spec.chain, plan.weight_pool.title if plan.weight_pool else None)


def _wrap(line: str, width: int = 110) -> str:
    """Markdown paragraphs and list items wrapped (headings and blank lines as they are)."""
    if not line or line.startswith("#"):
        return line
    indent = "  " if line.startswith("- ") else ""
    return textwrap.fill(line, width=width, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False)
