"""The GPU bar's teeth: plant one bug at a time in a scratch copy of the tree and run the GPU tests that cover the
path it breaks; each must fail. Prints a table (which tests caught which bug, and the first problem they name).

    device: PYTHONPATH=. python3 benchmarks/mutations.py [--out DIR]

All mutants run at once (their builds overlap); each gets its own copy, build cache and log.
"""
import argparse
import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class Mutation:
    key: str
    what: str
    path: str  # the file changed, relative to the repository
    old: str  # text that occurs exactly once there
    new: str
    tests: tuple  # pytest arguments: the GPU tests of the path this bug breaks


MUTATIONS = (
    Mutation("eps", "eps dropped from the GroupNorm rstd", "templates/common.cuh.j2",
             "return rsqrt(m2 * (1.0 / count) + eps); }", "return rsqrt(m2 * (1.0 / count)); (void)eps; }",
             ("tests/test_gpu_module.py", "-k", "random_shapes and 3xtf32-sm90")),
    Mutation("k_floor", "mma.sync mainloop's K loop bound floored (K / BK)", "templates/engines/mainloop_mma_tf32.cuh.j2",
             "const int k_tiles = (K + BK - 1) / BK;", "const int k_tiles = K / BK;",
             ("tests/test_gpu_module.py", "-k", "random_shapes and 3xtf32-sm80-planes-off")),
    Mutation("bwd_sign", "Hardtanh's backward sign flipped in modules on the mma.sync engine",
             "templates/ops/stage_hardtanh.cuh.j2", "? g : 0.f;",
             '? {% if plan.mainloop.startswith("mma") %}-{% endif %}g : 0.f;',
             ("tests/test_gpu_chains.py", "-k", "sm80 and (hardtanh or headline_variants)")),
    Mutation("grad_w_element", "one grad_weight element scaled by 1.1 (the scaled wgmma engine's dW launch)",
             "templates/launchers.cuh.j2",
             "        return launch_wgmma<false, false, true>(wgmma_store_persistent_kernel<Wgmma, false>, 1, s, dp.p,"
             " nullptr, N,\n                                                M, dp.ld, xp.p, M, K, xp.ld, out, dp.scale, dw,"
             " N, K, M);\n      }\n    }\n    return launch_wgmma<false, false>(wgmma_store_kernel<false>, sc.split, s,"
             " dp.p, nullptr, N, M, dp.ld, xp.p, M, K,\n                                      xp.ld, dp.scale, dw, N, K,"
             " M, sk);",
             "        const char* e = launch_wgmma<false, false, true>(wgmma_store_persistent_kernel<Wgmma, false>, 1, s,"
             " dp.p, nullptr, N, M, dp.ld, xp.p, M, K, xp.ld, out, dp.scale, dw, N, K, M);\n"
             "        scale_one<<<1, 1, 0, s>>>(dw + 5 * K + 7);\n        return e;\n      }\n    }\n"
             "    const char* e = launch_wgmma<false, false>(wgmma_store_kernel<false>, sc.split, s, dp.p, nullptr, N, M,"
             " dp.ld, xp.p, M, K, xp.ld, dp.scale, dw, N, K, M, sk);\n    scale_one<<<1, 1, 0, s>>>(dw + 5 * K + 7);\n"
             "    return e;",
             ("tests/test_gpu_scaled_planes.py", "-k", "extreme and 3xtf32")),
    Mutation("unwritten_tile", "one forward output tile left unwritten (wgmma engine, block (1, 0))",
             "templates/launchers.cuh.j2",
             "  const Wgmma::Ring q = Wgmma::ring(smem);\n  if (threadIdx.x >= Wgmma::EPI_THREADS) {\n"
             "    Wgmma::produce<true>",
             "  if (blockIdx.x == 1 && blockIdx.y == 0) return;\n  const Wgmma::Ring q = Wgmma::ring(smem);\n"
             "  if (threadIdx.x >= Wgmma::EPI_THREADS) {\n    Wgmma::produce<true>",
             ("tests/test_gpu_chains.py", "-k", "sm90 and relu_scale_tanh")),
    Mutation("softmax_sum", "softmax's backward without its row sum (dv = y g)", "templates/ops/reduce_softmax.cuh.j2",
             "((double)g - sum_gy)", "((double)g + 0.0 * sum_gy)",
             ("tests/test_gpu_chains.py", "-k", "sm90 and (row_softmax or row_mixed)")),
    Mutation("team_merge", "a block-wide row merge that drops all warps but the first (rows over 1024 values)",
             "templates/epilogue/row_state.cuh.j2", "for (int w = 1; w < TEAM / 32; ++w) {",
             "for (int w = 1; w < 1; ++w) {",
             ("tests/test_gpu_chains.py", "-k", "sm90 and (row_softmax_module_wide or row_logsumexp_tail)")),
    Mutation("bn_projection", "BatchNorm's backward without the batch statistics' gradient (dv = rstd gamma g)",
             "templates/ops/column_batch_norm.cuh.j2", "return c.batch ? (float)", "return false ? (float)",
             ("tests/test_gpu_chains.py", "-k", "sm90 and (bn_relu or bn_no_affine)")),
    Mutation("gn_rows_merge", "a GroupNorm beside row reductions merges only half of a group's lanes",
             "templates/epilogue/row_state.cuh.j2", "for (int offset = W / 2; offset > 0; offset >>= 1) {",
             "for (int offset = W / 4; offset > 0; offset >>= 1) {",
             ("tests/test_gpu_chains.py", "-k", "sm90 and (row_gn_softmax or row_gn_silu)")),
    Mutation("gn_rows_projection", "a GroupNorm beside row reductions: backward without the group mean of g gamma",
             "templates/ops/reduce_group_norm.cuh.j2", "(gg - sums[2 * grp] / WIDTH", "(gg - 0.0 * sums[2 * grp]",
             ("tests/test_gpu_chains.py", "-k", "sm90 and row_center_gn")),
    Mutation("split_k_order", "split-K's last block adds its own registers first, then the others' partials: the sum's "
             "order follows arrival order", "templates/engines/split_k.cuh.j2",
             "acc[i][j] = __ldcg(first + (i * E::ACC_N + j) * E::EPI_THREADS);\n#pragma unroll 1\n"
             "  for (int s = 1; s < S; ++s) {\n",
             "acc[i][j] += 0.f;\n#pragma unroll 1\n  for (int s = 0; s < S; ++s) {\n"
             "    if (s == (int)blockIdx.z) continue;\n",
             ("tests/test_gpu_module.py", "-k", "deterministic")),
    Mutation("split_k_slice", "split-K's last block drops the last slice's partial", "templates/engines/split_k.cuh.j2",
             "for (int s = 1; s < S; ++s) {", "for (int s = 1; s < S - 1; ++s) {",
             ("tests/test_gpu_module.py", "-k", "random_shapes and 3xtf32-sm90")),
    Mutation("outer_row", "grad_weight's outer product drops the last batch row's term (batches of 2-4)",
             "templates/engines/mainloop_gemv_fp32.cuh.j2", "  for (int m = 0; m < M; ++m) {",
             "  for (int m = 0; m < M - (M > 1); ++m) {",
             ("tests/test_gpu_module.py", "-k", "few_rows")),
    Mutation("gemv_lanes", "the few-rows forward's shuffle tree skips its first step (half the lanes' sums lost)",
             "templates/engines/mainloop_gemv_fp32.cuh.j2", "for (int offset = 16; offset > 0; offset >>= 1)",
             "for (int offset = 8; offset > 0; offset >>= 1)", ("tests/test_gpu_module.py", "-k", "few_rows")),
    Mutation("counters_per_call", "split-K's counters allocated and cleared (with a device sync) on every call",
             "templates/launchers.cuh.j2", "  if (!counters[d]) {", "  if (true) {",
             ("tests/test_gpu_real_use.py", "-k", "cuda_graph")),
    Mutation("staged_rows", "dx's and dW's staged stores swap each pair of rows (16-bit wgmma, whole tiles)",
             "templates/epilogue/epilogue_store.cuh.j2",
             "*reinterpret_cast<uint4*>(dst + (r0 + r) * ldc + p * PER_PIECE) =",
             "*reinterpret_cast<uint4*>(dst + (r0 + (r ^ 1)) * ldc + p * PER_PIECE) =",
             ("tests/test_gpu_dtypes.py", "-k", "test_half_module and wgmma and not m128 and bfloat16 and 1024x1024x1024x32")),
    Mutation("gn_vec_grad", "the one-pass GroupNorm backward reads a thread's vector of grad_out reversed (where "
             "it loads it as one: VEC_GRAD)", "templates/epilogue/gn_backward.cuh.j2",
             "dy[i][e] = post_bwd(to_f32(cur.grad[i].v[e]), ",
             "dy[i][e] = post_bwd(to_f32(cur.grad[i].v[VEC_GRAD ? CH - 1 - e : e]), ",
             ("tests/test_gpu_dtypes.py", "-k", "grad_out_layout and bfloat16")),
    Mutation("gn_staged_stats_row", "the persistent 16-bit forward's statistics stored by every lane of a group "
             "all at its block's first row (the other rows' left unwritten)",
             "templates/epilogue/epilogue_gn_fragment_wgmma.cuh.j2",
             "    const int row = m0 + E::row(i0 + b0 + k);", "    const int row = m0 + E::row(i0 + b0);",
             ("tests/test_gpu_dtypes.py", "-k", "test_half_module and wgmma and not m128 and bfloat16 and 777x520x8192x512")),
    Mutation("bn_running_var", "the running variance updated with the biased batch variance",
             "templates/epilogue/epilogue_cols.cuh.j2", "f * var * M / (M - 1)));", "f * var));",
             ("tests/test_gpu_batchnorm.py", "-k", "bn_relu")),
    Mutation("dropout_bwd_mask", "dropout's backward draws another stage's mask (not the forward's)",
             "templates/ops/stage_dropout.cuh.j2", "return p == 0.f ? g : __fmul_rn(g, factor(row, col, p, s));",
             "return p == 0.f ? g : __fmul_rn(g, factor(row + 1, col, p, s));",
             ("tests/test_gpu_dropout.py", "-k", "fp64 and dropout_alone")),
    Mutation("dropout_scale", "dropout's kept values not scaled by 1 / (1 - p)", "templates/ops/stage_dropout.cuh.j2",
             "? __fdiv_rn(1.f, __fsub_rn(1.f, p)) : 0.f;", "? 1.f : 0.f;",
             ("tests/test_gpu_dropout.py", "-k", "fp64 and bn_relu")),
    Mutation("input_grad", "dx without the residual of the layer's input (dres never added)",
             "templates/binding.cpp.j2", "if (need_x) check_status(fg::add_input_grad(",
             "if (false) check_status(fg::add_input_grad(",
             ("tests/test_gpu_input_residual.py", "-k", "fp64 and stage_input")),
    Mutation("max_pool_tie", "the max pool takes the last of equal maxima (torch takes the first)",
             "templates/ops/pool_max_pool.cuh.j2", "if (at < 0 || v > best || isnan(v))",
             "if (at < 0 || v >= best || isnan(v))", ("tests/test_gpu_max_pool.py", "-k", "ties")),
    Mutation("max_pool_overlap", "the max pool's backward keeps only the first window holding each element",
             "templates/ops/pool_max_pool.cuh.j2", "if (__float_as_int(p.y) == j) g += p.x;",
             "if (__float_as_int(p.y) == j) { g += p.x; break; }",
             ("tests/test_gpu_max_pool.py", "-k", "fp64 and (wider or overlap)")),
    Mutation("avg_pool_rows_divisor", "the row kernels' average pool backward without its windows' divisors",
             "templates/ops/pool_avg_pool.cuh.j2", "g += __fdiv_rn(pairs[w].x, divisor(w, nz));", "g += pairs[w].x;",
             ("tests/test_gpu_pool.py", "-k", "16_bit and padded")),
    Mutation("pool_divisor", "the average pool's divisor counts the padding even with count_include_pad=False",
             "templates/ops/weight_avg_pool.cuh.j2", "divisor = p.count_pad ? stop - start : end - first;",
             "divisor = stop - start;", ("tests/test_gpu_pool.py", "-k", "fp64 and padded")),
    Mutation("pool_grad_window", "the pooled weight's backward skips the last window holding each row",
             "templates/ops/weight_avg_pool.cuh.j2", "const int hi = min(p.n_out - 1, (j + p.padding) / p.stride);",
             "const int hi = min(p.n_out - 1, (j + p.padding) / p.stride) - 1;",
             ("tests/test_gpu_pool.py", "-k", "fp64 and gelu")),
    Mutation("pool_cache_version", "the cached pooled (and reduced) weight keyed without the parameters' version counters",
             "templates/version_cache.py.j2", "key = tuple((id(o), t.data_ptr(), t._version, tuple(t.shape), tuple(t.stride()), t.device)",
             "key = tuple((id(o), t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.device)",
             ("tests/test_gpu_pool.py", "-k", "cached")),
)
MUTATIONS += (
    Mutation("x_lo_dropped", "3xfp16 without the hi(R) x lo(P) product (x's lo plane unread in forward)",
             "templates/engines/mainloop_wgmma_half.cuh.j2",
             "        mma<R_K_FAST, P_K_FAST>(acc, r + k16 * RS, p_lo + k16 * PS, 1);\n", "",
             ("tests/test_gpu_scaled_planes.py", "tests/test_gpu_module.py", "-k",
              "(extreme and 3xtf32) or (random_shapes and 3xtf32-sm90)")),
    Mutation("mma_b_lo_dropped", "3xfp16 on mma.sync (sm_80's default) without the hi(A) x lo(B) product",
             "templates/engines/mainloop_mma_half.cuh.j2", "              mma(c, a[0][mt], b[PLANES - 1][nt]);\n", "",
             ("tests/test_gpu_engines.py", "tests/test_gpu_scaled_planes.py", "-k",
              "two_plane or (extreme and 3xtf32-sm80)")),
    Mutation("w_split_nearest", "the weight's 3xfp16 planes split to nearest, not SAFE (an Inf of x meets lo "
             "and hi of opposite signs)", "templates/launchers.cuh.j2",
             "&buffer, &wp, s, true, changed);", "&buffer, &wp, s, false, changed);",
             ("tests/test_gpu_scaled_planes.py", "-k", "extreme and 3xtf32")),
    Mutation("fingerprint_blind", "the weight's fingerprint never reports a change (a write through .data keeps "
             "the stale planes)", "templates/engines/operand_scale.cuh.j2",
             "if (kept[first + k] != now[k]) differs = 1, kept[first + k] = now[k];",
             "if (kept[first + k] != now[k]) kept[first + k] = now[k];",
             ("tests/test_gpu_scaled_planes.py", "-k", "follows")),
    Mutation("x_planes_unwritten", "forward reports x's planes kept for grad_weight but writes them to its scratch "
             "(grad_weight reads a buffer nobody wrote)", "templates/launchers.cuh.j2",
             "x_kept ? &kept : at, xp, s)", "at, xp, s)",
             ("tests/test_gpu_scaled_planes.py", "-k", "extreme and 3xtf32")),
    Mutation("bulk_store_unswizzled", "the backward GEMMs' output stage written in plain rows while the copy "
             "engine's bulk stores read it in the 128-byte swizzle", "templates/epilogue/epilogue_store.cuh.j2",
             "(((piece % 8) ^ (r % 8)) * 16)", "((piece % 8) * 16)",
             ("tests/test_gpu_scaled_planes.py", "tests/test_gpu_dtypes.py", "-k",
              "(extreme and 3xtf32 and wide) or (half_module and wgmma and 512x4096x4096x128 and bfloat16)")),
    Mutation("rows_factor_doubled", "the row planes without a folded factor (x, W) made at twice their row's scale",
             "templates/engines/operand_scale.cuh.j2", "rest = pow2(-se - half);", "rest = pow2(1 - se - half);",
             ("tests/test_gpu_scaled_planes.py", "-k", "extreme and tf32 and linear")),
    Mutation("fold_rare_skipped", "dz's row planes (W's scales folded) scale every value by its exponent's bits, "
             "zeros, subnormals and non-finite values too", "templates/engines/operand_scale.cuh.j2",
             "        if (rare)\n#pragma unroll\n          for (int k = 0; k < V; ++k) s[k] = times_pow2(v[k], d[k]);",
             "        if (false)\n#pragma unroll\n          for (int k = 0; k < V; ++k) s[k] = times_pow2(v[k], d[k]);",
             ("tests/test_gpu_scaled_planes.py", "-k", "extreme and tf32 and linear")),
    Mutation("row_tail_unstored", "the row planes' values past those held in registers left unwritten (rows over "
             "8192 values, or 1024 in the 4-byte form)", "templates/engines/operand_scale.cuh.j2",
             "      store(v, c);\n", "      if (c < 0) store(v, c);\n",
             ("tests/test_gpu_scaled_planes.py", "-k", "extreme and wide and 3xtf32")),
)
# the grad_weight mutant's helper kernel (a mutant may add code; it must not change the others)
EXTRA = {"grad_w_element": ("templates/launchers.cuh.j2", "static const char* last_error() {",
                            "template <class T>\n__global__ void scale_one(T* p) { *p = T((float)*p * 1.1f); }\n\n"
                            "static const char* last_error() {")}


def plant(m: Mutation, root: pathlib.Path):
    """Copy the tree to root and plant m there."""
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(".git", "__pycache__", ".hypothesis", "*.egg-info"))
    edits = [(m.path, m.old, m.new)] + ([EXTRA[m.key]] if m.key in EXTRA else [])
    for path, old, new in edits:
        f = root / path
        text = f.read_text()
        if text.count(old) != 1:
            raise SystemExit(f"{m.key}: expected the text to change once in {path}, found it {text.count(old)} times")
        f.write_text(text.replace(old, new))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/fusegen-mutations"))
    ap.add_argument("--only", default="", help="comma-separated mutation keys (default: all)")
    ap.add_argument("--part", default="0/1", help="i/n: every n-th mutation from the i-th (each builds its own "
                    "modules: all of them at once outlast one 10-minute device call since session 26)")
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / "fusegen-mutants"
    shutil.rmtree(scratch, ignore_errors=True)
    i, n = (int(v) for v in args.part.split("/"))
    chosen = [m for m in MUTATIONS if not args.only or m.key in args.only.split(",")][i::n]
    procs = {}
    start = time.time()
    for m in chosen:
        root = scratch / m.key
        plant(m, root)
        env = dict(os.environ, PYTHONPATH=str(root), FUSEGEN_CACHE_DIR=str(scratch / f"{m.key}-cache"),
                   FUSEGEN_GPU_EXAMPLES=os.environ.get("FUSEGEN_GPU_EXAMPLES", "30"), FUSEGEN_GPU_SHRINK="0",
                   FUSEGEN_QUIET="1",
                   PYTHONUNBUFFERED="1")
        env.pop("FUSEGEN_ACCURACY_LOG", None)
        log = open(out / f"mutant-{m.key}.txt", "w")
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *m.tests]
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        procs[m.key] = (m, subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT), log)
    rows = []
    for key, (m, proc, log) in procs.items():
        rc = proc.wait()
        log.close()
        text = (out / f"mutant-{key}.txt").read_text()
        failed = re.findall(r"^FAILED (\S+)", text, re.M)
        first = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("E ")), "")
        rows.append((m, rc, failed, first[:160]))
    print(f"mutants: {len(rows)} in {time.time() - start:.0f} s")
    print("| bug planted | tests run | caught by | first problem named |")
    print("|---|---|---|---|")
    for m, rc, failed, first in rows:
        caught = ", ".join(f.split("::")[-1] for f in failed) if rc == 1 and failed else f"NOT CAUGHT (pytest rc {rc})"
        print(f"| {m.what} (`{m.path}`) | `{' '.join(m.tests)}` | {caught} | {first.replace('|', '/')} |")
    return 0 if all(rc == 1 and failed for _, rc, failed, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
