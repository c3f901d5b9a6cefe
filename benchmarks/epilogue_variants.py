"""Where a module's GEMM kernels spend their epilogue time, by leaving one piece out (METHOD: time variants that
leave a stage out, take differences). Each variant is the planned module's source with one edit; the edited
modules build in parallel, then each is timed per kernel (benchmarks/kernel_times.py's step_kernel_times). The
outputs of a variant are wrong by design: this measures, it checks nothing.

    device: PYTHONPATH=. python3 benchmarks/epilogue_variants.py [--dtype bfloat16] [--init 8192,8192,512]
            [--batch 1024] [--variants base,no_z,no_stats,no_out,no_store] [--reps 10]
"""
import argparse
import pathlib
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import fusegen  # noqa: E402
from fusegen.codegen import write_module  # noqa: E402
from fusegen.tools.tune import _build_all, _import  # noqa: E402
from kernel_times import step_kernel_times  # noqa: E402

# the one-pass GroupNorm backward's pieces (the variants gn_bwd_no_* below)
GN_NO_SHUFFLE = [("      s1[i] = subwarp_sum<ONE_GROUP_LANES>(s1[i]) / GW;\n"
                  "      s2[i] = subwarp_sum<ONE_GROUP_LANES>(s2[i]) / GW;\n",
                  "      s1[i] /= GW;\n      s2[i] /= GW;\n")]
GN_NO_STATS_LOAD = [("b.mean[i] = on ? (stat_t)a.mean[so] : stat_t(0);",
                     "b.mean[i] = on ? stat_t(0.25) : stat_t(0);"),
                    ("b.rstd[i] = on ? (stat_t)a.rstd[so] : stat_t(0);",
                     "b.rstd[i] = on ? stat_t(1.5) : stat_t(0);")]
# (z's registers read as the gradient: modules whose z and grad_out share a type, as the 16-bit ones)
GN_NO_GRAD_LOAD = [("b.grad[i] = on ? load_vec<CH>(a.grad_out + go) : Vec<CH, out_t>{};", "b.grad[i] = b.z[i];"),
                   ("if (on) b.grad[i].v[e] = *grad;", "b.grad[i].v[e] = b.z[i].v[e];")]
GN_NO_DZ_STORE = [("      store_vec(a.dz + zo, dz);", "      if (row < 0) store_vec(a.dz + zo, dz);")]
# the one-pass GroupNorm backward's geometry as the 16-bit modules compile it (Plan.gn_backward_channels, _rows,
# _blocks) and its chunks of rows (gn_backward_chunks: one wave of blocks)
GN_16 = ("constexpr int ONE_CH = 8;", "constexpr int ONE_MIN_BLOCKS = 2;", "constexpr int ONE_ROWS_IN_FLIGHT = 2;",
         "(long long)sm_count() * ONE_MIN_BLOCKS / blocks_wide")


# the text tma_prefetch_N inserts into produce_tile (PF: how many k tiles past the one loaded)
PREFETCH = """      if constexpr (PLANES == 1) {
        if (kt + PF < k_tiles) {
          const int kp = k + PF * BK;
          auto prefetch = [](const CUtensorMap& m, int inner, int outer) {
            asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, { %1, %2 }];\\n"
                         ::"l"(reinterpret_cast<unsigned long long>(&m)), "r"(inner), "r"(outer) : "memory");
          };
          if (P_K_FAST) {
            prefetch(p, kp, m0);
          } else {
            for (int b = 0; b < TILE_M / 64; ++b) prefetch(p, m0 + 64 * b, kp);
          }
          if (R_K_FAST) {
            prefetch(r, kp, n0);
          } else {
            for (int b = 0; b < BN / 64; ++b) prefetch(r, n0 + 64 * b, kp);
          }
        }
      }
"""


# the consumers' issue of a k tile's products (mainloop_wgmma_half's step) and the padding mainloop_pad_N puts after it
MAINLOOP_ISSUE = ("    issue<R_K_FAST, P_K_FAST>(q, (pos + kt) % STAGES, acc, kt % (PROMOTE_TILES ? PROMOTE_TILES : k_tiles) "
                  "== 0);\n")
MAINLOOP_PAD = """    {
      unsigned v = threadIdx.x + kt;
#pragma unroll
      for (int i = 0; i < PAD; ++i)
        asm volatile("shf.l.wrap.b32 %0, %0, %0, 5;\\n\\txor.b32 %0, %0, %1;" : "+r"(v) : "r"(0x9E3779B9u * (i + 1)));
      asm volatile("" ::"r"(v));
    }
"""


def gn_geometry(ch, blocks, rows, waves=1):
    """The one-pass GroupNorm backward of a 16-bit module at ch channels a thread, blocks an SM, rows in flight and
    chunks for `waves` waves of blocks."""
    return [(GN_16[0], f"constexpr int ONE_CH = {ch};"), (GN_16[1], f"constexpr int ONE_MIN_BLOCKS = {blocks};"),
            (GN_16[2], f"constexpr int ONE_ROWS_IN_FLIGHT = {rows};"),
            (GN_16[3], f"(long long)sm_count() * ONE_MIN_BLOCKS * {waves} / blocks_wide")]


# variant -> (what it leaves out, [(text in the module, its replacement)]); each text must occur
VARIANTS = {
    "base": ("nothing", []),
    "no_z": ("the forward's z store (the backward's input)",
             [("if (a.z) a.z[o] = to_op(zv[b][e]);", "")]),
    "no_stats": ("the forward's mean / rstd stores",
                 [("      a.mean[group] = m;\n", "\n"), ("      a.rstd[group] = r;\n", "\n"),
                  ("a.mean[group] = mean_s;", ""), ("a.rstd[group] = rstd_s;", "")]),
    # (the value's arithmetic sinks into the branch that never runs: out's arithmetic and store both leave)
    "no_out": ("the forward's output: its normalize, affine, stages and store",
               [("a.out[o] = to_out(", "if (o == -7) a.out[o] = to_out(")]),
    "no_store": ("dx's and dW's global stores, from the fragments or the output stage (the accumulators are "
                 "computed, and staged, all the same)",
                 [("if (row < M && col < N) C[row * ldc + col] = to_elem(acc[i][j]);",
                   "if (row < M && col < N && M < 0) C[row * ldc + col] = to_elem(acc[i][j]);"),
                  ("*reinterpret_cast<uint4*>(dst + (r0 + r) * ldc + p * PER_PIECE) =",
                   "if (ldc < 0) *reinterpret_cast<uint4*>(dst + (r0 + r) * ldc + p * PER_PIECE) =")]),
    # the persistent backward GEMMs' tile boundary (scaled planes: dx and dW at fp32), piece by piece
    "no_unscale": ("the persistent GEMMs' unscale",
                   [("unscale<E>(acc, p_scale, nullptr, rows, cols, m0, n0);",
                     "")]),
    "no_bulk_store": ("the persistent GEMMs' bulk stores (staged all the same: no buffer waits for one)",
                      [("E::tma_store(out, buffer", "if (m0 < 0) E::tma_store(out, buffer")]),
    "no_store_wait": ("the persistent GEMMs' wait for a staging buffer's previous store (racy: outputs wrong)",
                      [("else E::template store_wait_read<1>();", "")]),
    "no_tile_epilogue": ("the persistent GEMMs' whole epilogue: unscale, staging, stores",
                         [("unscale<E>(acc, p_scale, nullptr, rows, cols, m0, n0);",
                           ""),
                          ("store_fragments_bulk<E>(acc, out.map,",
                           "if (acc[0][0] == 1234.5f) store_fragments_bulk<E>(acc, out.map,")]),
    # what the persistent GEMMs' staging costs (session 45 run 1, dW: ~12 us staged without stores, ~8 more with
    # them): its barriers and waits (left out: racy, the outputs wrong), or its shared-memory traffic (written
    # twice: if dW then grows by ~12 us more, the bytes are the cost, as a mainloop short of shared-memory
    # bandwidth would make them)
    "no_staging_waits": ("the persistent GEMMs' staging barriers and buffer waits (racy: outputs wrong)",
                         [("      if (pass == 0 && PASSES % 2 == 1) E::template store_wait_read<0>();\n"
                           "      else E::template store_wait_read<1>();\n    }\n    E::sync_group();\n"
                           "    stage_rows<E>(acc, buffer, pass * CH);\n    E::fence_async_shared();\n"
                           "    E::sync_group();\n",
                           "    }\n    stage_rows<E>(acc, buffer, pass * CH);\n    E::fence_async_shared();\n")]),
    "staging_twice": ("nothing: the persistent GEMMs' staging written twice a pass (its shared-memory bytes doubled)",
                      [("    stage_rows<E>(acc, buffer, pass * CH);\n    E::fence_async_shared();\n",
                        "    stage_rows<E>(acc, buffer, pass * CH);\n    stage_rows<E>(acc, buffer, pass * CH);\n"
                        "    E::fence_async_shared();\n")]),
    "no_tile_staging": ("the persistent GEMMs' staging and bulk stores (unscale, where the planes have one, kept)",
                        [("store_fragments_bulk<E>(acc, out.map,",
                          "if (acc[0][0] == 1234.5f) store_fragments_bulk<E>(acc, out.map,")]),
    # the persistent GEMMs' bulk stores marked first to leave L2 (createpolicy evict_first): dW's 256 MB of output
    # then presses less on the operands' tiles there
    "store_evict_first": ("nothing: the bulk stores hinted L2 evict_first",
                          [('asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, { %1, %2 }], '
                            '[%3];\\n"\n                 ::"l"(reinterpret_cast<unsigned long long>(&map)), "r"(inner), '
                            '"r"(outer), "r"(smem_addr(src))\n',
                            'unsigned long long policy;\n    asm volatile("createpolicy.fractional.L2::evict_first.b64 '
                            '%0, 1.0;\\n" : "=l"(policy));\n    asm volatile("cp.async.bulk.tensor.2d.global.'
                            'shared::cta.bulk_group.L2::cache_hint [%0, { %1, %2 }], [%3], %4;\\n"\n                 '
                            '::"l"(reinterpret_cast<unsigned long long>(&map)), "r"(inner), "r"(outer), '
                            '"r"(smem_addr(src)), "l"(policy)\n')]),
    # the forward's tile boundary: one tile a block again (the persistent forward off), and without its epilogue (scaled planes)
    "fwd_tile_a_block": ("nothing: the forward one tile a block (wgmma_forward_kernel), not persistent",
                         [("if (!err && sc.split == 1) {\n        err = launch_wgmma<true, true, true>("
                           "wgmma_forward_persistent_kernel",
                           "if (!err && sc.split == 0) {\n        err = launch_wgmma<true, true, true>("
                           "wgmma_forward_persistent_kernel")]),
    "fwd_tile_a_block_staged": ("nothing: the 16-bit forward with staged stores one tile a block, not persistent",
                                [("if (!err && staged) {  // (else one tile a block",
                                  "if (!err && staged && M < 0) {  // (else one tile a block")]),
    "no_fwd_epilogue": ("the wgmma forward's whole epilogue: unscale (scaled planes), the GroupNorm and the chain, "
                        "its stores",
                        [("  (void)smem;\n  (void)maps;\n",
                          "  (void)smem;\n  (void)maps;\n  if (acc[0][0] != 1234.5f) return;\n")]),
    # the GroupNorm-on-fragments epilogue's global stores of z and the output left out, their arithmetic kept
    # (an empty asm takes each value): the stores' share of the forward's epilogue
    "no_fwd_stores": ("the forward's z and output stores (the fragment GroupNorm; its arithmetic kept)",
                      [("            a.out[o] = to_out(post_fwd(gn_affine(gn_xhat(v[b][e], mean, rstd), gamma[q + e], "
                        "beta[q + e]), row, col,\n                                       a.st));\n"
                        "            if (a.z) a.z[o] = to_op(zv[b][e]);\n",
                        "            const float kept = post_fwd(gn_affine(gn_xhat(v[b][e], mean, rstd), gamma[q + e], "
                        "beta[q + e]), row, col, a.st);\n            asm volatile(\"\" ::\"f\"(kept), \"f\"(zv[b][e]));\n")]),
    # the one-pass GroupNorm backward's channels a thread, blocks an SM, rows in flight, and chunks for w waves of
    # blocks (ptxas -v, bf16: 8 channels take ~125 registers, and at 3 blocks with one row 12-116 bytes spill; 4
    # with two rows ~79, with one ~60). Session 45 runs 2-3 with chunks for 2^18 threads (8 channels: 32 chunks,
    # 4: 16, 2: 8): 2 / 4 / 2 24.9 us, 4 / 3 / 2 23.3, 4 / 4 / 1 22.1, 8 / 2 / 2 27.6; 8 / 2 / 2 in 8 chunks 19.3.
    **{f"gn_bwd_ch{c}_b{b}_r{r}" + (f"_w{w}" if w != 1 else ""): (
        f"nothing: the one-pass GroupNorm backward at {c} channels a thread, {b} blocks an SM, {r} rows in flight, "
        f"chunks for {w} waves", gn_geometry(c, b, r, w))
       for c, b, r, w in ((2, 4, 2, 1), (2, 4, 2, 2), (4, 4, 1, 1), (8, 2, 2, 2), (8, 3, 1, 1), (8, 2, 1, 1),
                          (8, 2, 3, 1))},
    # the one-pass GroupNorm backward piece by piece (session 41: its time, ~32-34 us on the H200, moved with none of
    # its geometry: vector width, blocks an SM, rows at once, waves; tests/gpu-results/h200-2026-11-28-s41)
    "gn_bwd_no_shuffle": ("the one-pass GroupNorm backward's shuffles (each lane's own sums: dz wrong)", GN_NO_SHUFFLE),
    "gn_bwd_no_stats_load": ("the one-pass GroupNorm backward's loads of mean and rstd (8 MB; constants instead)",
                             GN_NO_STATS_LOAD),
    "gn_bwd_no_grad_load": ("the one-pass GroupNorm backward's loads of grad_out (z read as the gradient too)",
                            GN_NO_GRAD_LOAD),
    "gn_bwd_no_dz_store": ("the one-pass GroupNorm backward's stores of dz (its arithmetic kept: the bias sums it)",
                           GN_NO_DZ_STORE),
    "gn_bwd_z_and_dz_only": ("the one-pass GroupNorm backward's shuffles and its loads of the statistics and "
                             "grad_out (z's loads, the arithmetic and dz's stores remain)",
                             GN_NO_SHUFFLE + GN_NO_STATS_LOAD + GN_NO_GRAD_LOAD),
    # the one-pass GroupNorm backward's walk down the rows: gn_backward_chunks sizes the chunks for one wave of
    # blocks (session 42 asked whether a thread's serial walk was the limit, with chunks for 2^17-2^20 threads)
    "gn_bwd_threads_4_waves_z_and_dz_only": ("gn_bwd_z_and_dz_only's pieces, with chunks for 4 waves of blocks",
                                             GN_NO_SHUFFLE + GN_NO_STATS_LOAD + GN_NO_GRAD_LOAD
                                             + [(GN_16[3], "(long long)sm_count() * ONE_MIN_BLOCKS * 4 / blocks_wide")]),
    # where z comes from: grad_out's buffer read as z (written by the harness long before, not by the step's
    # forward just before), and z read with nothing written (z_and_dz_only without dz's stores)
    "gn_bwd_z_from_grad": ("nothing but z's source: the one-pass GroupNorm backward reads grad_out as z",
                           [("b.z[i] = on ? load_vec<CH>(a.z + zo)",
                             "b.z[i] = on ? load_vec<CH>(reinterpret_cast<const z_t*>(a.grad_out) + zo)")]),
    "gn_bwd_z_only": ("gn_bwd_z_and_dz_only's pieces and dz's stores (z's loads and the arithmetic remain)",
                      GN_NO_SHUFFLE + GN_NO_STATS_LOAD + GN_NO_GRAD_LOAD + GN_NO_DZ_STORE),
    # the one-pass kernel is issue-bound (Nsight Compute, session 42 run 8: issue slots 73% busy, ~91 instructions an
    # element): its column sums left out (dgamma, dbeta, dbias wrong). (Run 10's gn_bwd_int_rows, 32-bit row
    # indices, is now the kernel's own form where the offsets fit: its Index template argument.)
    "gn_bwd_no_col_sums": ("the one-pass GroupNorm backward's column sums (the parameters' gradients)",
                           [("        sums[e][0] = fma((stat_t)dy[i][e], xhat_d, sums[e][0]);\n"
                             "        sums[e][1] += dy[i][e];\n"
                             "        sums[e][2] += to_f32(dz.v[e]);  // the bias's gradient sums dz as the GEMMs read it\n",
                             "")]),
    # the 16-bit engine's output stage for the persistent GEMMs' bulk stores: rows a pass (a buffer; two a
    # consumer warpgroup), and the ring's stages that make room for bigger ones (4 stages leave 64 rows in bf16)
    "out_rows_32": ("nothing: the output stage 32 rows a pass (4 stages)",
                    [("out_stage_rows(8192 / OUT_ROW_BYTES", "out_stage_rows(4096 / OUT_ROW_BYTES")]),
    "stages_3": ("nothing: 3 ring stages (the output stage as before: 64 rows a pass)",
                 [("static constexpr int STAGES = 4;", "static constexpr int STAGES = 3;")]),
    "stages_3_out_rows_128": ("nothing: 3 ring stages and the output stage 128 rows a pass (a 256-row tile in two)",
                              [("static constexpr int STAGES = 4;", "static constexpr int STAGES = 3;"),
                               ("out_stage_rows(8192 / OUT_ROW_BYTES", "out_stage_rows(16384 / OUT_ROW_BYTES")]),
    # the 16-bit forward's epilogue, instruction by instruction (session 44 run 3: 5766 warp instructions a warp a
    # tile, a quarter of its stalls waiting for instructions): rsqrtf without its denormal path (4 instructions a
    # row; every gn_rstd(float) of the module: right where m2 / count + eps >= FLT_MIN; session 45: -2.2 us, not
    # taken, as eps may be 0). The sums started at -0 and xhat from the variance's v - mean (-1.3, -2.3) are the
    # template's since session 45.
    # the staged forward's statistics stored group-major (mean[g * M + row]): a warp's store then writes 32
    # consecutive rows' 8 bytes (256 contiguous bytes), where row-major ones put each 8-byte value in its own
    # sector (no_stats, session 45 run 1: the stores cost ~8.6 us of 8 MB). Timing only: the backward still reads
    # them row-major, so the gradients are wrong.
    "fwd_stats_group_major": ("nothing: the staged forward's statistics stored group-major (gradients wrong)",
                              [("      const long long group = (long long)row * G + col0 / GW;\n"
                                "      a.mean[group] = m;\n",
                                "      const long long group = (long long)(col0 / GW) * M + row;\n"
                                "      a.mean[group] = m;\n")]),
    # the chain's last rounding is the output store's own where out_t is the element type (16-bit modules): to_out
    # of as_elem(v) rounds twice to one type, the same bits as once; 2 instructions a value of the forward's ~45
    # (session 44's count) and likewise in the backward's recomputation. Timing first; landing it is the planner's
    # (the chain's code would leave the last stage's rounding to the store).
    "fwd_last_round_off": ("nothing: the chain's last rounding left to the output's store (the same bits in 16 bits)",
                           [("  const float v3 = as_elem(S2::fwd(v2, row, col, s));\n  return v3;",
                             "  const float v3 = S2::fwd(v2, row, col, s);\n  return v3;")]),
    "fwd_rstd_ftz": ("nothing: the float statistics' rsqrt flushing denormals (one MUFU a row)",
                     [("float gn_rstd(float m2, int count, float eps) { return rsqrtf(m2 * (1.f / count) + eps); }",
                       "float gn_rstd(float m2, int count, float eps) {\n  float r;\n  asm(\"rsqrt.approx.ftz.f32 %0, "
                       "%1;\" : \"=f\"(r) : \"f\"(m2 * (1.f / count) + eps));\n  return r;\n}")]),
    # the one-pass GroupNorm backward's statistics kept as loaded (fp64) in the prefetched batch and converted where
    # used: converted in load_batch, the conversion waited for the load at once, and 40% of the loop's samples sat
    # on those F2F.F32.F64 (Nsight Compute, session 44 run 3). The same arithmetic: the same results expected.
    "gn_bwd_stats_raw": ("nothing: the one-pass GroupNorm backward's statistics converted at their use, not load",
                         [("    stat_t mean[R], rstd[R];\n", "    double mean[R], rstd[R];  // (as loaded)\n"),
                          ("b.mean[i] = on ? (stat_t)a.mean[so] : stat_t(0);", "b.mean[i] = on ? a.mean[so] : 0.0;"),
                          ("b.rstd[i] = on ? (stat_t)a.rstd[so] : stat_t(0);", "b.rstd[i] = on ? a.rstd[so] : 0.0;"),
                          ("const stat_t du = cur.rstd[i] * (", "const stat_t du = (stat_t)cur.rstd[i] * (")]),
    # the wgmma GEMMs' ring at 3 stages ran 12-18 us slower than at 4 (session 46 run 4: forward, dx and dW alike),
    # so each GEMM waits on its loads' latency. The producer also asking L2 for the boxes of the k tile `pf` past
    # the one it loads (bulk tensor prefetch: no shared memory, no barrier) puts W's tiles, read from DRAM by the
    # forward and dx, in L2 before their loads (one plane an operand only: 2-D maps)
    **{f"tma_prefetch_{pf}": (f"nothing: the producer prefetches into L2 the k tile {pf} past each it loads",
                              [("      const int k = k0 + kt * BK;\n",
                                "      const int k = k0 + kt * BK;\n" + PREFETCH.replace("PF", str(pf)))])
       for pf in (2, 4, 8)},
    # What the operands' traffic from L2 costs a sustained step (the card at its power cap: power_clocks.py): every
    # GEMM's producer loads P (or R) only into the ring's first STAGES stages of a kernel, the consumers reading
    # those stale stages ever after (the same products on other data)
    "p_loaded_once": ("nothing but P's loads after the ring's first pass: P's stages stale (2/3 of the forward's "
                      "operand bytes from L2)",
                      [("bar_expect_bytes(q.full + s, STAGE_BYTES);",
                        "bar_expect_bytes(q.full + s, at < STAGES ? STAGE_BYTES : PLANES * R_BYTES);"),
                       ("char* ps = stage + piece * P_BYTES;\n        if (P_K_FAST) {",
                        "char* ps = stage + piece * P_BYTES;\n        if (at >= STAGES) {\n        } else if (P_K_FAST) {")]),
    "r_loaded_once": ("nothing but R's loads after the ring's first pass: R's stages stale (1/3 of the forward's "
                      "operand bytes from L2)",
                      [("bar_expect_bytes(q.full + s, STAGE_BYTES);",
                        "bar_expect_bytes(q.full + s, at < STAGES ? STAGE_BYTES : PLANES * P_BYTES);"),
                       ("char* rs = stage + PLANES * P_BYTES + piece * R_BYTES;\n        if (R_K_FAST) {",
                        "char* rs = stage + PLANES * P_BYTES + piece * R_BYTES;\n        if (at >= STAGES) {\n"
                        "        } else if (R_K_FAST) {")]),
    # What instructions cost a sustained step: each consumer warp runs PAD extra dependent integer instructions
    # (a rotate and an xor each, ~2 SASS instructions) a k tile, while that k tile's products run; in a profile
    # they hide under the products, at the power cap they cost their energy
    **{f"mainloop_pad_{n}": (f"nothing: {n} rotate-xor pairs a consumer warp a k tile, beside the products",
                             [(MAINLOOP_ISSUE, MAINLOOP_ISSUE + MAINLOOP_PAD.replace("PAD", str(n)))])
       for n in (32, 64)},
    # the persistent GEMMs' tile order: row tiles in groups of RASTER_ROWS (65536: the row tile fastest over all)
    **{f"raster_{n}": (f"nothing: groups of {n} row tiles", [("constexpr int RASTER_ROWS = 8;",
                                                                f"constexpr int RASTER_ROWS = {n};")])
       for n in (2, 4, 16, 65536)},
}


def sustained(paths, x, g, input_size, hidden, groups, dtype, args):
    """Each variant's no_grad forward and accumulating step back to back for args.sustained seconds: ms a call and
    the card's SM MHz and W (medians of nvidia-smi's samples), medians over args.rounds rounds."""
    from power_clocks import sustained_rounds
    models = {}
    for name, path in paths.items():
        torch.manual_seed(0)
        models[name] = _import(path).ModelNew(input_size, hidden, groups).cuda().to(dtype)
    rows = sustained_rounds(models, x, g, args.sustained, args.rounds)
    print(f"\nsustained ({args.sustained} s back to back a call, medians over {args.rounds} alternating rounds): "
          "ms a call, SM MHz, W")
    print(f"{'variant':<24} {'forward':>8} {'MHz':>6} {'W':>5} {'acc. step':>10} {'MHz':>6} {'W':>5}")
    for name in models:
        f, t = rows[name, "forward"], rows[name, "step"]
        print(f"{name:<24} {f[0]:8.4f} {f[1]:6.0f} {f[2]:5.0f} {t[0]:10.4f} {t[1]:6.0f} {t[2]:5.0f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--init", default="8192,8192,512", help="input, hidden, groups")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--precision", default="3xtf32", help="float32 layers: 3xtf32 (the default), tf32 or fp32")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sustained", type=float, default=0.0, metavar="SECONDS",
                    help="also time each variant's no_grad forward and accumulating step back to back for SECONDS "
                         "(the card at its power cap, as a training loop runs it: power_clocks.py), in --rounds "
                         "rounds that alternate the variants")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--check", metavar="GPU", help="no GPU needed: plan for this GPU name on sm_90, say which "
                    "variants' texts the module holds, and stop")
    args = ap.parse_args()
    input_size, hidden, groups = (int(v) for v in args.init.split(","))
    dtype = getattr(torch, args.dtype)
    spec = fusegen.Spec(input_size, hidden, groups, dtype=args.dtype,
                        **({"precision": args.precision} if args.dtype == "float32" else {}))
    gpu, arch = (args.check, (9, 0)) if args.check else (torch.cuda.get_device_name(), torch.cuda.get_device_capability())
    p = fusegen.plan(spec, gpu=gpu, arch=arch, batch=args.batch)
    print(f"{p.module_name}: {p.summary}", flush=True)
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-variants-"))
    text = write_module(p, workdir).read_text()
    if args.check:
        for name in args.variants.split(","):
            missing = [old for old, _ in VARIANTS[name][1] if old not in text]
            print(f"{name:36s} {'ok' if not missing else 'MISSING ' + repr(missing[0][:60])}")
        return
    paths = {}
    for name in args.variants.split(","):
        edited = text
        for old, new in VARIANTS[name][1]:
            if old not in edited:
                raise SystemExit(f"variant {name}: the module has no {old!r} (the template changed: update VARIANTS)")
            edited = edited.replace(old, new)
        paths[name] = workdir / f"{p.module_name}_{name}.py"
        paths[name].write_text(edited)
    failed = _build_all(list(paths.values()), len(paths))
    if failed:
        raise SystemExit("builds failed:\n" + "\n".join(f"{k}: {v}" for k, v in failed.items()))
    gen = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(args.batch, input_size, device="cuda", generator=gen).to(dtype).requires_grad_()
    g = torch.randn(args.batch, hidden, device="cuda", generator=gen).to(dtype)
    table = {}
    for name, path in paths.items():
        torch.manual_seed(0)
        model = _import(path).ModelNew(input_size, hidden, groups).cuda().to(dtype)
        table[name] = step_kernel_times(model, x, g, args.reps, by_launch=True)
    if args.sustained:
        sustained(paths, x, g, input_size, hidden, groups, dtype, args)
    kernels = sorted({k for t in table.values() for k in t}, key=lambda k: -table["base"].get(k, (0,))[0]
                     if "base" in table else k)
    print(f"\n{torch.cuda.get_device_name()}, {args.dtype}, batch {args.batch}, init {args.init}: us a step per "
          f"kernel, medians over {args.reps} steps")
    print(f"{'kernel':<60} " + " ".join(f"{n:>9}" for n in table))
    for k in kernels:
        print(f"{k[:60]:<60} " + " ".join(f"{table[n][k][0] if k in table[n] else float('nan'):9.1f}" for n in table))
    for name in table:
        print(f"  {name}: leaves out {VARIANTS[name][0]}")


if __name__ == "__main__":
    main()
