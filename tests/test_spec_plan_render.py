"""CPU tests of the front end: Spec validation, the planner, rendering, and the generated module (no GPU).

The generated modules are imported and constructed here, never run: forward needs CUDA. Importing one must
compile nothing (checked with an empty FUSEGEN_CACHE_DIR).
"""
import ast
import dataclasses
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers import HEADLINE, REFERENCE_FILE, REPO, import_file, reference_namespace

import fusegen
from fusegen.codegen.explain import explain
from fusegen.frontend import model_spec
from fusegen.plan import FRAGMENT, TILE_LOCAL, TWO_STAGE
from fusegen.plan.planner import THREE_FP16_TILE

SHARED_REFERENCE = REPO.parent / "shared" / "reference" / "reference_model.py"
REFERENCE_NAMES = ("Model", "get_inputs", "get_init_inputs")
MODELS = REPO / "tests" / "models"


# --------------------------------------------------------------------------------------------------------------
# Spec validation
# --------------------------------------------------------------------------------------------------------------

def test_valid_spec_and_group_width():
    s = fusegen.Spec(100, 96, 12)
    assert (s.input_size, s.hidden_size, s.num_groups) == (100, 96, 12)
    assert s.group_width == 8
    assert s.eps == 1e-5 and s.negative_slope == 0.01
    assert fusegen.Spec(1, 1, 1).group_width == 1
    assert issubclass(fusegen.SpecError, ValueError)


@pytest.mark.parametrize("field", ["input_size", "hidden_size", "num_groups"])
@pytest.mark.parametrize("value", [0, -1, -512])
def test_spec_rejects_non_positive_sizes(field, value):
    kwargs = dict(input_size=64, hidden_size=64, num_groups=4)
    kwargs[field] = value
    with pytest.raises(fusegen.SpecError) as info:
        fusegen.Spec(**kwargs)
    msg = str(info.value)
    assert field in msg and str(value) in msg, msg


@pytest.mark.parametrize("field", ["input_size", "hidden_size", "num_groups"])
@pytest.mark.parametrize("value", [True, False, 64.0, 1.5, "64", None])
def test_spec_rejects_non_int_sizes(field, value):
    kwargs = dict(input_size=64, hidden_size=64, num_groups=4)
    kwargs[field] = value
    with pytest.raises(fusegen.SpecError) as info:
        fusegen.Spec(**kwargs)
    msg = str(info.value)
    assert field in msg and repr(value) in msg, msg


@pytest.mark.parametrize("hidden, groups", [(10, 3), (8192, 500), (7, 2), (1, 2)])
def test_spec_rejects_hidden_not_divisible_by_groups(hidden, groups):
    with pytest.raises(fusegen.SpecError) as info:
        fusegen.Spec(16, hidden, groups)
    msg = str(info.value)
    assert "divisible" in msg
    assert f"hidden_size ({hidden})" in msg and f"num_groups ({groups})" in msg, msg


@given(hidden=st.integers(1, 100_000), groups=st.integers(1, 4096))
@settings(max_examples=60, deadline=None)
def test_spec_rejects_indivisible_groups_property(hidden, groups):
    assume(hidden % groups != 0)
    with pytest.raises(fusegen.SpecError) as info:
        fusegen.Spec(8, hidden, groups)
    msg = str(info.value)
    assert "divisible" in msg and str(hidden) in msg and str(groups) in msg, msg
    # the suggested divisors are real divisors
    m = re.search(r"\[([0-9, ]+)\]", msg)
    if m:
        suggested = [int(d) for d in m.group(1).split(",")]
        assert suggested and all(hidden % d == 0 for d in suggested), msg


@given(hidden=st.integers(1, 100_000), data=st.data())
@settings(max_examples=40, deadline=None)
def test_spec_accepts_every_divisor_property(hidden, data):
    divisors = [d for d in range(1, math.isqrt(hidden) + 1) if hidden % d == 0]
    divisors += [hidden // d for d in divisors]
    groups = data.draw(st.sampled_from(sorted(set(divisors))))
    assert fusegen.Spec(8, hidden, groups).group_width * groups == hidden


@pytest.mark.parametrize("field", ["eps", "negative_slope"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), "0.1", None, True])
def test_spec_rejects_non_finite_floats(field, value):
    with pytest.raises(fusegen.SpecError) as info:
        fusegen.Spec(16, 16, 2, **{field: value})
    msg = str(info.value)
    assert field in msg and repr(value) in msg, msg


@pytest.mark.parametrize("eps", [0, 0.0, -1e-5, -1])
def test_spec_rejects_non_positive_eps(eps):
    with pytest.raises(fusegen.SpecError) as info:
        fusegen.Spec(16, 16, 2, eps=eps)
    msg = str(info.value)
    assert "eps" in msg and str(eps) in msg, msg


@given(eps=st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf"))))
@settings(max_examples=30, deadline=None)
def test_spec_rejects_bad_eps_property(eps):
    with pytest.raises(fusegen.SpecError, match="eps"):
        fusegen.Spec(16, 16, 2, eps=eps)


def test_spec_accepts_negative_and_zero_slope():
    assert fusegen.Spec(16, 16, 2, negative_slope=-0.5).negative_slope == -0.5
    assert fusegen.Spec(16, 16, 2, negative_slope=0).negative_slope == 0
    assert fusegen.Spec(16, 16, 2, eps=1).eps == 1


# --------------------------------------------------------------------------------------------------------------
# Planner
# --------------------------------------------------------------------------------------------------------------

def _spec_for_width(gw, groups=4, input_size=64, precision="fp32"):
    return fusegen.Spec(input_size, gw * groups, groups, precision=precision)


def test_spec_dtype():
    Spec, SpecError = fusegen.Spec, fusegen.SpecError
    """What the tensors hold is part of the spec: float32 (the default, names as before dtypes), bfloat16,
    float16; `precision` (how fp32 operands multiply) stays at its default for the half types."""
    assert Spec(8, 8, 2).dtype == "float32" and "dtype" not in repr(Spec(8, 8, 2))
    assert Spec(8, 8, 2, dtype="bfloat16") != Spec(8, 8, 2)
    with pytest.raises(SpecError, match="dtype must be one of float32, bfloat16, float16, got 'float64'"):
        Spec(8, 8, 2, dtype="float64")
    with pytest.raises(SpecError, match="precision .tf32. chooses how float32 operands multiply"):
        Spec(8, 8, 2, dtype="float16", precision="tf32")
    assert fusegen.plan(Spec(8, 8, 2, dtype="bfloat16")).mainloop == "mma_bf16"  # (more in test_dtypes)


def test_headline_plan():
    p = fusegen.plan(HEADLINE)
    assert p.group_width == 16 and p.precision == "3xtf32" and p.mainloop == "mma_3xf16s" and p.arch_flags == ()
    assert p.group_strategy == FRAGMENT and p.tuned_for == ""
    assert isinstance(p.tile, fusegen.MmaTile) and p.simt_tile.block_n == p.tile.block_n
    assert p.pieces_per_group == 1
    assert p.fixed_sizes is True
    assert p.spec is HEADLINE
    assert p.fusegen_version == fusegen.__version__


@pytest.mark.parametrize("precision", ["3xtf32", "tf32"])
def test_tensor_core_plans_choose_the_register_epilogue_where_a_group_fits_a_quad(precision):
    for gw in range(1, 300):
        p = fusegen.plan(_spec_for_width(gw, 2, precision=precision))
        if precision == "3xtf32" and gw < 8:  # tiny groups: FFMA engine, z as exact as the reference's
            assert p.mainloop == "simt_fp32" and isinstance(p.tile, fusegen.GemmTile), gw
            continue
        assert p.mainloop == ("mma_tf32" if precision == "tf32" else "mma_3xf16s"), gw  # (3xfp16 on mma.sync)
        fits = gw & (gw - 1) == 0 and p.tile.warp_n % gw == 0
        want = FRAGMENT if fits else (TILE_LOCAL if p.tile.block_n % gw == 0 else TWO_STAGE)
        assert p.group_strategy == want, gw
    assert fusegen.plan(_spec_for_width(16, precision="tf32")).promote_every_k == 0  # TF32: no totals
    assert fusegen.plan(_spec_for_width(16, precision="3xtf32")).promote_every_k == 64


@pytest.mark.parametrize("precision", ["3xtf32", "tf32"])
def test_hopper_plans_run_wgmma_beside_an_mma_sync_fallback(precision):
    for gw in range(1, 300):
        spec = _spec_for_width(gw, 2, precision=precision)
        p = fusegen.plan(spec, arch=(9, 0))
        if precision == "3xtf32" and gw < 8:
            assert p.mainloop == "simt_fp32" and p.arch_flags == (), gw
            continue
        # the 16-bit engine over scaled fp16 planes of the operands: one for tf32 on its 256-row tile, two for
        # 3xtf32 (3xfp16)
        assert p.mainloop == ("wgmma_f16s" if precision == "tf32" else "wgmma_3xf16s"), gw
        assert isinstance(p.tile, fusegen.WgmmaTile) and p.scaled and p.pieces == (1 if precision == "tf32" else 2)
        assert p.arch_flags == ("-gencode=arch=compute_90a,code=sm_90a",)  # wgmma needs sm_90a exactly
        # the mma.sync engine takes operands the copy engine cannot read; same output columns (at most 128 rows),
        # same epilogue
        assert isinstance(p.mma_tile, fusegen.MmaTile) and (p.mma_tile.block_m, p.mma_tile.block_n) == \
            (min(p.tile.block_m, 128), p.tile.block_n)
        fits = gw & (gw - 1) == 0 and gw <= 16 and p.mma_tile.warp_n % gw == 0
        want = FRAGMENT if fits else (TILE_LOCAL if p.tile.block_n % gw == 0 else TWO_STAGE)
        assert p.group_strategy == want, gw
        assert p.kernel_uri != fusegen.plan(spec, arch=(8, 0)).kernel_uri
    # a taller wgmma tile (wgmma's n up to 256): the fallbacks keep their 128 rows, the columns (and with them
    # the group strategy) shared
    for dtype in ("bfloat16", "float32"):
        spec = _spec_for_width(16, 2, precision=precision) if dtype == "float32" else \
            fusegen.Spec(1024, 1024, 64, dtype=dtype)
        tall = fusegen.plan(spec, tile=fusegen.WgmmaTile(block_m=256, block_n=128, stages=2),
                            scaled_planes=False)  # (3xfp16 holds at most 128 rows: below)
        assert (tall.tile.block_m, tall.mma_tile.block_m, tall.simt_tile.block_m, tall.narrow_tile.block_m) == \
            (256, 128, 128, 32), dtype
        assert tall.mma_tile.block_n == tall.simt_tile.block_n == 128
        assert tall.group_strategy == fusegen.plan(spec, arch=(9, 0)).group_strategy
    # other architectures (and no architecture: rendering for an unknown GPU) get the portable engine
    for arch in [(8, 0), (8, 9), (10, 0), None]:
        p = fusegen.plan(_spec_for_width(16, precision=precision), arch=arch)
        assert p.mainloop == ("mma_tf32" if precision == "tf32" else "mma_3xf16s"), arch
    assert fusegen.plan(_spec_for_width(16), arch=(9, 0)).mainloop == "simt_fp32"  # fp32 runs FFMA everywhere
    # not tuned: the command that regenerates it names the architecture
    assert "--arch 9.0" in fusegen.render(fusegen.plan(_spec_for_width(16, precision=precision), arch=(9, 0)))


@pytest.mark.parametrize("kwargs", [dict(block_n=192), dict(block_n=32), dict(block_m=48), dict(block_m=512),
                                    dict(stages=1)])
def test_wgmma_tile_rejects_unsupported_shapes(kwargs):
    with pytest.raises(ValueError):
        fusegen.WgmmaTile(**kwargs)


def test_3xfp16_refuses_tiles_taller_than_its_registers():
    spec = _spec_for_width(16, precision="3xtf32")
    with pytest.raises(ValueError, match="at most 128 rows"):
        fusegen.plan(spec, tile=fusegen.WgmmaTile(block_m=256, block_n=128, stages=2))
    assert fusegen.plan(spec, tile=fusegen.WgmmaTile(block_m=256, block_n=128, stages=2), scaled_planes=False).wgmma


def test_wgmma_tile_over_shared_memory_is_refused_by_the_planner():
    big = fusegen.WgmmaTile(stages=5)  # 5 x 48 KB of 3xTF32 stages
    with pytest.raises(ValueError, match="bytes of shared memory in 3xtf32, over the 232448"):
        fusegen.plan(_spec_for_width(16, precision="3xtf32"), tile=big)
    assert fusegen.plan(_spec_for_width(16, precision="tf32"), tile=big).tile == big  # 5 x 32 KB fits


def test_wgmma_tune_candidates_fit_shared_memory():
    from fusegen.tools import tune
    for precision in ("3xtf32", "tf32"):
        tiles = tune.candidates(precision, (9, 0))
        assert tiles and all(isinstance(t, fusegen.WgmmaTile) for t in tiles)
        assert all(t.smem_bytes(precision == "3xtf32") <= fusegen.WgmmaTile.SMEM_LIMIT for t in tiles)
        assert (fusegen.WgmmaTile() if precision == "tf32" else THREE_FP16_TILE) in tiles  # (the planner's default)
        assert all(t.plane_smem_bytes(1 if precision == "tf32" else 2) <= fusegen.WgmmaTile.SMEM_LIMIT
                   for t in tiles)
    assert all(isinstance(t, fusegen.MmaTile) for t in tune.candidates("tf32", (8, 0)))


def test_tuning_table_decides_the_tile_when_asked(tmp_path, monkeypatch):
    from fusegen.plan import tuning as tune
    table = tmp_path / "t.json"
    tile = fusegen.MmaTile(warps_m=4, warps_n=2, stages=4)
    spec = _spec_for_width(16, precision="3xtf32")
    table.write_text(json.dumps({"GPU X": {"3xtf32": {tune.shape_key(spec, 512): {"tile": dataclasses.asdict(tile)}}}}))
    monkeypatch.setattr(tune, "TABLE", table)
    p = fusegen.plan(spec, gpu="GPU X")
    assert p.tile == tile and p.tuned_for == "GPU X" and "tuned on GPU X" in p.summary
    assert fusegen.plan(spec, gpu="GPU Y").tile == fusegen.MmaTile() and fusegen.plan(spec).tuned_for == ""
    assert fusegen.plan(_spec_for_width(16, precision="tf32"), gpu="GPU X").tuned_for == ""  # other precision
    assert '--gpu "GPU X"' in fusegen.render(p)
    # an entry names its engine: a Hopper entry brings the wgmma engine with it (no architecture needed), and
    # the mainloop it was timed on: the TF32 engine's tile serves that engine, not 3xfp16's
    hopper = fusegen.WgmmaTile(block_m=64, stages=3)
    entry = {"tile": dataclasses.asdict(hopper), "engine": "wgmma_tf32"}
    table.write_text(json.dumps({"GPU H": {"3xtf32": {tune.shape_key(spec, 512): entry}}}))
    p = fusegen.plan(spec, gpu="GPU H", scaled_planes=False)
    assert p.tile == hopper and p.mainloop == "wgmma_tf32" and p.tuned_for == "GPU H"
    p = fusegen.plan(spec, gpu="GPU H")
    assert p.mainloop == "wgmma_3xf16s" and p.tile == fusegen.plan(spec, arch=(9, 0)).tile and p.tuned_for == ""
    table.write_text(json.dumps({"GPU H": {"3xtf32": {tune.shape_key(spec, 512): dict(entry,
                                                                                      mainloop="wgmma_3xf16s")}}}))
    p = fusegen.plan(spec, gpu="GPU H")
    assert p.tile == hopper and p.mainloop == "wgmma_3xf16s" and p.tuned_for == "GPU H"
    assert fusegen.plan(spec, gpu="GPU H", scaled_planes=False).tuned_for == ""


@pytest.mark.parametrize("kwargs", [dict(block_k=12), dict(warps_m=3), dict(stages=1), dict(block_m=48),
                                    dict(block_n=80)])
def test_mma_tile_rejects_unsupported_shapes(kwargs):
    with pytest.raises(ValueError):
        fusegen.MmaTile(**kwargs)


def test_precision_is_checked_and_tiles_must_match_it():
    with pytest.raises(fusegen.SpecError, match="precision must be one of 3xtf32, tf32, fp32"):
        fusegen.Spec(8, 8, 1, precision="fp16")
    with pytest.raises(TypeError, match="MmaTile"):
        fusegen.plan(_spec_for_width(16, precision="tf32"), tile=fusegen.GemmTile())
    with pytest.raises(TypeError, match="GemmTile"):
        fusegen.plan(_spec_for_width(16, precision="fp32"), tile=fusegen.MmaTile())


@pytest.mark.parametrize("gw", [1, 2, 4, 8, 16, 32, 64, 128])
def test_group_width_dividing_tile_is_tile_local(gw):
    p = fusegen.plan(_spec_for_width(gw))
    assert p.tile.block_n % gw == 0
    assert p.group_strategy == TILE_LOCAL
    assert p.pieces_per_group == 1


@pytest.mark.parametrize("gw", [3, 5, 7, 12, 48, 96, 127, 129, 200, 256, 8192])
def test_group_width_not_dividing_tile_is_two_stage(gw):
    p = fusegen.plan(_spec_for_width(gw, groups=2))
    assert p.tile.block_n % gw != 0
    assert p.group_strategy == TWO_STAGE
    assert p.pieces_per_group >= 2  # a group that does not divide the tile can straddle a tile edge


@pytest.mark.parametrize("gw", [1, 2, 3, 4, 8, 12, 16, 32, 48, 64, 128])
@pytest.mark.parametrize("precision", ["fp32", "3xtf32"])
def test_groupnorm_backward_is_one_pass_for_groups_within_a_warp(gw, precision):
    """Groups of a power of two up to 32 channels (their lanes share a warp: the one pass's shuffles) get the
    one-pass backward, others the per-group and per-column kernels; the rendered source has only the plan's."""
    p = fusegen.plan(_spec_for_width(gw, groups=2, precision=precision))
    one_pass = gw <= 32 and gw & (gw - 1) == 0
    assert p.gn_backward_one_pass == one_pass, (gw, p.group_strategy)
    source = fusegen.render_cuda(p)
    assert ("gn_backward_one_pass_kernel(BackwardArgs" in source) == one_pass  # (definitions, not comments)
    assert ("gn_backward_rows_kernel(BackwardArgs" in source) == (not one_pass)
    assert ("gsums = fresh({fg::gn_backward_partial_doubles" in fusegen.render_binding(p)) == one_pass


def test_groupnorm_backward_geometry_follows_the_types():
    """The one-pass GroupNorm backward's channels a thread and blocks an SM: 8 channels (one 16-byte vector of
    16-bit z) at 2 blocks where the statistics are fp32 and z 16-bit (bf16, fp16, autocast), 2 channels at 4 blocks
    for tf32 (fp32 z; sm_90) and at 2 in float64 (3xtf32, fp32: 3 spill and ran slower); never more channels than a
    group has; and the rendered kernel says so."""
    cases = {"bfloat16": (dict(dtype="bfloat16"), 8, 2), "float16": (dict(dtype="float16"), 8, 2),
             "autocast": (dict(autocast="bfloat16"), 8, 2), "tf32": (dict(precision="tf32"), 2, 4),
             "3xtf32": ({}, 2, 2), "fp32": (dict(precision="fp32"), 2, 2)}
    for label, (kw, channels, blocks) in cases.items():
        for arch in ((9, 0), (8, 0)):
            p = fusegen.plan(fusegen.Spec(8192, 8192, 512, **kw), arch=arch)
            if p.statistics.name == "float64":  # (tf32 on sm_80 keeps float64 statistics)
                blocks = 2
            assert (p.gn_backward_channels, p.gn_backward_blocks) == (channels, blocks), (label, arch)
            source = fusegen.render_cuda(p)
            assert f"constexpr int ONE_CH = {channels};" in source, (label, arch)
            assert f"constexpr int ONE_MIN_BLOCKS = {blocks};" in source, (label, arch)
    for groups, channels, rows, blocks in ((8192, 1, 2, 4), (4096, 2, 2, 4), (2048, 4, 1, 4), (256, 8, 2, 2)):
        p = fusegen.plan(fusegen.Spec(8192, 8192, groups, dtype="bfloat16"), arch=(9, 0))
        assert (p.gn_backward_channels, p.gn_backward_rows, p.gn_backward_blocks) == (channels, rows, blocks), groups
        assert f"constexpr int ONE_ROWS_IN_FLIGHT = {rows};" in fusegen.render_cuda(p), groups


def test_groupnorm_statistics_type_follows_the_operands():
    """16-bit operands (bf16, fp16, autocast): the statistics and the backward projection in fp32, as PyTorch's
    16-bit GroupNorm; fp32 layers in double (their backward projection needs it). Storage stays float64."""
    cases = {fusegen.Spec(64, 64, 4): "float64", fusegen.Spec(64, 64, 4, dtype="bfloat16"): "float32",
             fusegen.Spec(64, 64, 4, dtype="float16"): "float32",
             fusegen.Spec(64, 64, 4, autocast="bfloat16"): "float32"}
    for spec, want in cases.items():
        for arch in ((8, 0), (9, 0)):
            p = fusegen.plan(spec, arch=arch)
            assert p.statistics.name == want, (spec, arch)
            assert f"using stat_t = {'double' if want == 'float64' else 'float'};" in fusegen.render_cuda(p)


@pytest.mark.parametrize("tile", [fusegen.GemmTile(), fusegen.GemmTile(block_m=64, block_n=64),
                                  fusegen.GemmTile(block_m=128, block_n=64)], ids=lambda t: t.name)
def test_strategy_follows_the_tile(tile):
    for gw in range(1, 3 * tile.block_n + 2):
        p = fusegen.plan(_spec_for_width(gw), tile=tile)
        assert p.tile == tile
        assert p.group_strategy == (TILE_LOCAL if tile.block_n % gw == 0 else TWO_STAGE), gw


def _tiles_touched(start, gw, block_n):
    return (start + gw - 1) // block_n - start // block_n + 1


@pytest.mark.parametrize("block_n", [128, 64])
def test_pieces_per_group_bounds_tiles_touched(block_n):
    """A group of gw channels starting at g*gw touches at most pieces_per_group tiles (brute force)."""
    tile = fusegen.GemmTile(block_m=128, block_n=block_n)
    for gw in list(range(1, 3 * block_n + 3)) + [500, 1000, 1023, 4095, 4096, 8192]:
        for groups in (1, 2, 3, 5, 16, 64):
            p = fusegen.plan(_spec_for_width(gw, groups), tile=tile)
            most = max(_tiles_touched(g * gw, gw, block_n) for g in range(groups))
            assert most <= p.pieces_per_group, (gw, groups, most, p.pieces_per_group)
            if p.group_strategy == TILE_LOCAL:
                assert p.pieces_per_group == 1 and most == 1
        # the bound is what it claims: the most tiles a run of gw columns starting anywhere can touch (tight)
        if block_n % gw:
            p = fusegen.plan(_spec_for_width(gw, 1), tile=tile)
            assert max(_tiles_touched(s, gw, block_n) for s in range(block_n)) == p.pieces_per_group, gw


def test_lanes_per_group_contract():
    for gw in list(range(1, 300)) + [511, 512, 1024, 4096, 8192]:
        p = fusegen.plan(_spec_for_width(gw, 2))
        lanes = p.lanes_per_group
        assert lanes & (lanes - 1) == 0 and 1 <= lanes <= 32, (gw, lanes)  # power of two, at most a warp
        assert lanes >= min(gw, 32), (gw, lanes)  # every channel of a narrow group gets a lane
        assert lanes == 1 or lanes // 2 < gw, (gw, lanes)  # no wholly idle half sub-warp
        assert p.tile.threads % lanes == 0 and 256 % lanes == 0  # templates static_assert these
    assert [fusegen.plan(_spec_for_width(gw)).lanes_per_group for gw in (1, 2, 3, 5, 16, 17, 33, 4096)] == [
        1, 2, 4, 8, 16, 32, 32, 32]


def test_plan_options():
    s = fusegen.Spec(100, 64, 4)
    assert fusegen.plan(s).fixed_sizes is True
    assert fusegen.plan(s, fixed_sizes=False).fixed_sizes is False
    with pytest.raises(TypeError, match="Spec"):
        fusegen.plan((100, 64, 4))


@pytest.mark.parametrize("kwargs", [dict(thread_m=4), dict(block_n=72), dict(block_m=40)])
def test_gemm_tile_rejects_unsupported_shapes(kwargs):
    with pytest.raises(ValueError):
        fusegen.GemmTile(**kwargs)


def test_spec_plan_tile_are_frozen():
    s = fusegen.Spec(64, 64, 4, precision="fp32")
    p = fusegen.plan(s)
    for obj, field, value in [(s, "hidden_size", 128), (s, "eps", 1.0), (p, "group_strategy", TWO_STAGE),
                              (p, "lanes_per_group", 1), (p, "fixed_sizes", False), (p.tile, "block_n", 64)]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, field, value)
    assert s.hidden_size == 64 and p.group_strategy == TILE_LOCAL
    # frozen dataclasses hash and compare by value
    assert fusegen.plan(fusegen.Spec(64, 64, 4, precision="fp32")) == p
    assert hash(fusegen.plan(fusegen.Spec(64, 64, 4, precision="fp32"))) == hash(p)


def test_summary_names_the_strategy():
    assert "epilogue" in fusegen.plan(_spec_for_width(16)).summary
    assert "registers" in fusegen.plan(_spec_for_width(16, precision="3xtf32")).summary
    two = fusegen.plan(_spec_for_width(200))
    assert "two-stage" in two.summary and str(two.pieces_per_group) in two.summary


# --------------------------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, fixed", [(HEADLINE, True), (fusegen.Spec(300, 600, 3), False),
                                         (fusegen.Spec(7, 9, 9), True)])
def test_render_is_deterministic(spec, fixed):
    p = fusegen.plan(spec, fixed_sizes=fixed)
    assert fusegen.render(p) == fusegen.render(fusegen.plan(spec, fixed_sizes=fixed))
    assert fusegen.render_cuda(p) == fusegen.render_cuda(p)
    assert fusegen.render_binding(p) == fusegen.render_binding(p)
    if fixed:
        assert fusegen.render(spec) == fusegen.render(p)  # a Spec is planned with the defaults


def test_render_is_deterministic_across_processes():
    """Same text in a fresh interpreter with another hash seed (nothing depends on set or dict order)."""
    code = ("import sys, fusegen; sys.stdout.write(fusegen.render(fusegen.plan(fusegen.Spec(300, 600, 3), "
            "fixed_sizes=False)))")
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(REPO), stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    assert out == fusegen.render(fusegen.plan(fusegen.Spec(300, 600, 3), fixed_sizes=False))


def test_kernel_uri_shared_per_group_width_when_sizes_are_dynamic():
    a, b = fusegen.Spec(64, 96, 6), fusegen.Spec(4096, 1024, 64)  # both group width 16
    c = fusegen.Spec(64, 96, 3)  # group width 32
    pa, pb, pc = (fusegen.plan(s, fixed_sizes=False) for s in (a, b, c))
    assert pa.kernel_uri == pb.kernel_uri
    assert pa.kernel_uri != pc.kernel_uri
    # sharing one build needs the very same sources (the build hash covers them)
    assert fusegen.render_cuda(pa) == fusegen.render_cuda(pb)
    assert fusegen.render_binding(pa) == fusegen.render_binding(pb)
    assert fusegen.render_cuda(pa) != fusegen.render_cuda(pc)
    # with sizes compiled in, every spec is its own build
    fa, fb = fusegen.plan(a, fixed_sizes=True), fusegen.plan(b, fixed_sizes=True)
    assert fa.kernel_uri != fb.kernel_uri
    assert fa.kernel_uri != pa.kernel_uri
    assert fusegen.render_cuda(fa) != fusegen.render_cuda(fb)
    assert re.fullmatch(r"[A-Za-z0-9_]+", fa.kernel_uri) and re.fullmatch(r"[A-Za-z0-9_]+", pa.kernel_uri)


def test_module_names_are_distinct_and_importable_names():
    specs = [fusegen.Spec(64, 64, 4), fusegen.Spec(64, 64, 4, eps=1e-3), fusegen.Spec(64, 64, 4, negative_slope=0.2),
             fusegen.Spec(65, 64, 4), fusegen.Spec(64, 64, 8)]
    plans = [fusegen.plan(s) for s in specs] + [fusegen.plan(specs[0], fixed_sizes=False)]
    names = [p.module_name for p in plans]
    assert len(set(names)) == len(names), names
    for p, name in zip(plans, names):
        assert name.isidentifier()
        s = p.spec
        assert name.startswith(f"lin_gn_lrelu2_i{s.input_size}_h{s.hidden_size}_g{s.num_groups}_")


def test_write_module(tmp_path):
    p = fusegen.plan(fusegen.Spec(32, 64, 4))
    path = fusegen.write_module(p, tmp_path / "out")
    assert path == tmp_path / "out" / (p.module_name + ".py")
    assert path.read_text() == fusegen.render(p)
    md = path.with_suffix(".md")
    assert sorted(x.name for x in (tmp_path / "out").iterdir()) == sorted([path.name, md.name])
    # the same explanation beside the module and in its docstring
    assert md.read_text() == explain(p) and explain(p) in path.read_text()
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert explain(p).strip() in doc


@pytest.mark.parametrize("precision", ["3xtf32", "tf32", "fp32"])
@pytest.mark.parametrize("gw,arch", [(16, (9, 0)), (16, (8, 0)), (200, (9, 0)), (3, None)])
def test_explanation_names_what_the_plan_does(precision, gw, arch):
    p = fusegen.plan(_spec_for_width(gw, 4, precision=precision), arch=arch)
    text = explain(p)
    for needed in ("nn.Linear(", "nn.GroupNorm(", "nn.LeakyReLU(", "x + x", p.mainloop, p.tile.name, p.precision,
                   "## Expected speed", "## Trade-offs and limits", "Compile time"):
        assert needed in text, (needed, text)
    assert {FRAGMENT: "registers", TILE_LOCAL: "shared memory", TWO_STAGE: "two-stage"}[p.group_strategy] in text
    if precision == "tf32":
        assert "FAILS allclose" in text
    assert all(len(line) <= 110 for line in text.splitlines())
    # no GPU named: FLOPs only; a modeled GPU: a roofline bound
    assert "no peak figures" in text
    assert "Roofline on NVIDIA H100" in explain(p, gpu="NVIDIA H100")


def test_explanation_reports_the_measured_benchmark_for_its_gpu_and_layer(tmp_path, monkeypatch):
    from fusegen.codegen import explain as explain_module
    p = fusegen.plan(HEADLINE, gpu="NVIDIA H200")
    rows = [{"impl": "fusegen 3xtf32", "forward_ms": 1.0, "forward_backward_ms": 3.0},
            {"impl": "pytorch eager", "forward_ms": 3.0, "forward_backward_ms": 9.0}]
    (tmp_path / "gpu-z.json").write_text(json.dumps({"gpu": "GPU Z", "batch": 1024, "date": "today", "rows": rows,
                                                     "input_size": 8192, "hidden_size": 8192, "num_groups": 512}))
    monkeypatch.setattr(explain_module, "RESULTS_DIR", tmp_path)
    text = explain(p, gpu="GPU Z")
    assert "Measured on GPU Z" in text and "3.00x / 3.00x vs eager" in text
    other = fusegen.plan(fusegen.Spec(4096, 8192, 512), gpu="NVIDIA H200")  # another layer: not its numbers
    assert "no benchmark of this layer" in explain(other, gpu="GPU Z")


def test_cuda_source_needs_no_torch_headers():
    for spec in (HEADLINE, fusegen.Spec(64, 600, 3)):
        cuda = fusegen.render_cuda(spec)
        includes = re.findall(r"^\s*#\s*include\s*[<\"]([^>\"]+)[>\"]", cuda, re.M)
        assert includes, "no includes at all?"
        for inc in includes:
            assert not inc.startswith(("torch/", "ATen/", "c10/")), inc
        binding = fusegen.render_binding(spec)
        assert "#include <torch/extension.h>" in binding
        assert "PYBIND11_MODULE(TORCH_EXTENSION_NAME" in binding


# --------------------------------------------------------------------------------------------------------------
# The committed headline module and the reference file
# --------------------------------------------------------------------------------------------------------------

def _headline_files():
    return sorted((REPO / "generated").glob("lin_gn_lrelu2_i8192_h8192_g512_*.py"))


REGENERATE = 'fusegen render --hidden 8192 --groups 512 --gpu "NVIDIA H200"'


def test_committed_headline_module_is_reproduced_byte_for_byte():
    files = _headline_files()
    assert len(files) == 1, f"expected exactly one committed headline module, found {[f.name for f in files]}"
    # the committed module is the one `render --gpu "NVIDIA H200"` writes: the table's H200 entry names the wgmma
    # engine, and its tile (timed on the 3xTF32 engine) gives way to 3xfp16's default until that is tuned
    p = fusegen.plan(HEADLINE, gpu="NVIDIA H200")
    assert p.mainloop == "wgmma_3xf16s" and p.tuned_for == ""
    assert files[0].name == p.module_name + ".py", (
        f"committed {files[0].name} but the current plan names it {p.module_name}.py: regenerate it with "
        f"`{REGENERATE}`")
    committed = files[0].read_bytes()
    rendered = fusegen.render(p).encode()
    assert committed == rendered, f"generated/ is stale: regenerate with `{REGENERATE}`"
    explanation = files[0].with_suffix(".md")
    assert explanation.read_text() == explain(p), f"{explanation.name} is stale: regenerate with `{REGENERATE}`"


# APIs the generated module may use only behind `if _HAS_CUSTOM_OP:` (torch >= 2.4); the rest of the file must
# load on torch 1.13.
NEWER_TORCH_APIS = {"custom_op", "register_fake", "register_autograd", "opcheck", "triton_op", "infer_schema"}


@pytest.mark.parametrize("spec,arch", [(HEADLINE, (9, 0)), (fusegen.Spec(64, 64, 4), None),
                                       (fusegen.Spec(96, 400, 2, precision="fp32"), None)])
def test_generated_module_uses_newer_torch_only_behind_its_guard(spec, arch):
    tree = ast.parse(fusegen.render(fusegen.plan(spec, arch=arch)))
    guards = [n for n in ast.walk(tree) if isinstance(n, ast.If) and isinstance(n.test, ast.Name)
              and n.test.id == "_HAS_CUSTOM_OP"]
    assert len(guards) == 1, "expected one `if _HAS_CUSTOM_OP:` block"
    inside = {id(n) for n in ast.walk(guards[0])}
    used = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in NEWER_TORCH_APIS]
    assert used, "the custom-op registration is gone: the test would check nothing"
    outside = [(n.attr, n.lineno) for n in used if id(n) not in inside]
    assert not outside, f"newer torch APIs outside the guard: {outside}"
    # the guard itself only asks whether they exist
    assigns = [n for n in tree.body if isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "_HAS_CUSTOM_OP" for t in n.targets)]
    assert len(assigns) == 1 and "hasattr" in ast.unparse(assigns[0].value)
    # the autograd.Function fallback exists for older torch
    assert "class _FusedLayer(torch.autograd.Function)" in ast.unparse(tree) or \
        any(isinstance(n, ast.ClassDef) and n.name == "_FusedLayer" for n in tree.body)


def test_custom_ops_register_once_and_have_fake_shapes(tmp_path):
    path = fusegen.write_module(fusegen.plan(fusegen.Spec(64, 64, 4)), tmp_path)
    first, second = import_file(path), import_file(path)  # a second import reuses the process-wide operators
    assert first._OPS is not None and second._OPS is not None
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x, w, b = torch.empty(5, 64), torch.empty(64, 64), torch.empty(64)
        # a GroupNorm's statistics, like z, only where kept for backward
        for keep, z_shape, stats_shape in ((True, (5, 64), (5, 4)), (False, (0,), (0,))):
            out, z, mean, rstd = second._OPS(x, w, b, b, b, 0.01, 1e-5, keep)
            assert out.shape == (5, 64) and z.shape == z_shape and mean.shape == rstd.shape == stats_shape
            assert mean.dtype == torch.float64


def test_custom_op_namespace_follows_the_kernel_sources(tmp_path):
    """A regenerated module with the same plan but other kernels must not reuse the operators an older one
    registered in this process: the namespace carries the hash the build runtime keys the sources by."""
    path = fusegen.write_module(fusegen.plan(fusegen.Spec(64, 64, 4)), tmp_path)
    text = path.read_text()
    changed = tmp_path / "changed.py"
    changed.write_text(text.replace("_CUDA_SOURCE = r'''", "_CUDA_SOURCE = r'''// changed\n", 1))
    old, new = import_file(path), import_file(changed)
    assert old._NAMESPACE.startswith(fusegen.plan(fusegen.Spec(64, 64, 4)).module_name)
    assert old._NAMESPACE != new._NAMESPACE and old._OPS is not new._OPS
    assert import_file(path)._NAMESPACE == old._NAMESPACE


@pytest.mark.parametrize("source", ["headline", "row_softmax_torch.py", "bn_relu.py"])
def test_module_reads_layer_first_and_sources_last(source, tmp_path, monkeypatch):
    """ModelNew and the layer come first, after the constants; the embedded sources, the build runtime and then the
    custom-operator registration (it hashes the sources with the runtime's _ext_name at import) come last. The
    module still imports on the CPU (registering its operators, compiling nothing)."""
    spec = HEADLINE if source == "headline" else model_spec(MODELS / source)[0]
    path = fusegen.write_module(fusegen.plan(spec, gpu="NVIDIA H200") if source == "headline" else
                                fusegen.plan(spec, arch=(9, 0)), tmp_path)
    text = path.read_text()

    def at(pattern):
        found = [m.start() for m in re.finditer(pattern, text, re.M)]
        assert len(found) == 1, (pattern, len(found))
        return found[0]

    layer = [at(p) for p in (r"^class ModelNew\(", r"^class _FusedLayer\(", r"^def _forward_impl\(",
                             r"^def _backward_impl\(", r"^def _check_input\(", r"^def _kernels\(")]
    tail = [at(p) for p in (r"^# Sources \(rendered by fusegen", r"^_CUDA_SOURCE = ", r"^_CPP_SOURCE = ",
                            r"^def load_extension\(", r"^def _ext_name\(", r"^_HAS_CUSTOM_OP = ")]
    assert at(r"^KERNEL_URI = ") < at(r"^class ModelNew\(") == min(layer), "the constants, then ModelNew"
    assert max(layer) < min(tail), "the layer must come before the embedded sources and the build runtime"
    assert tail[:3] == sorted(tail[:3]) and max(tail[:-1]) < tail[-1], "the registration goes last"
    cache = tmp_path / "cache"
    monkeypatch.setenv("FUSEGEN_CACHE_DIR", str(cache))
    module = import_file(path)
    assert issubclass(module.ModelNew, torch.nn.Module)
    assert (module._OPS is not None) == module._HAS_CUSTOM_OP
    assert not cache.exists(), "importing compiled something"


def test_reference_file_matches_shared_reference():
    if not SHARED_REFERENCE.is_file():
        pytest.skip(f"{SHARED_REFERENCE} not present")
    assert REFERENCE_FILE.read_bytes() == SHARED_REFERENCE.read_bytes()


def test_reference_and_headline_module_in_one_namespace(tmp_path, monkeypatch):
    """The kernel benchmark's way: exec the reference, then the candidate, into one dict."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("FUSEGEN_CACHE_DIR", str(cache))
    files = _headline_files()
    assert len(files) == 1
    ns = {}
    exec(compile(REFERENCE_FILE.read_text(), str(REFERENCE_FILE), "exec"), ns)
    before = {k: v for k, v in ns.items() if not k.startswith("__")}  # (the module docstring is rebound)
    assert all(name in before for name in REFERENCE_NAMES)
    exec(compile(files[0].read_text(), str(files[0]), "exec"), ns)
    for name, value in before.items():  # Model, get_inputs, batch_size, input_size, ... and torch, nn
        assert ns[name] is value, f"the generated module rebinds the reference's {name!r}"
    assert "ModelNew" in ns and isinstance(ns["ModelNew"], type)
    assert issubclass(ns["ModelNew"], torch.nn.Module)
    init = ns["get_init_inputs"]()
    assert init == [8192, 8192, 512]
    torch.manual_seed(0)
    ref = ns["Model"](*init)
    torch.manual_seed(0)
    new = ns["ModelNew"](*init)
    _assert_same_state(ref, new)
    assert not cache.exists(), "importing / constructing compiled something"


# --------------------------------------------------------------------------------------------------------------
# Random valid specs: the rendered module
# --------------------------------------------------------------------------------------------------------------

MAX_PARAMS = 1 << 21  # keeps each CPU construction small: input * hidden floats per Linear weight


@st.composite
def valid_specs(draw):
    gw = draw(st.one_of(st.integers(1, 300), st.sampled_from([1, 2, 3, 16, 17, 128, 129, 200, 256])))
    groups = draw(st.integers(1, 64))
    hidden = gw * groups
    input_size = draw(st.integers(1, max(1, min(8192, MAX_PARAMS // hidden))))
    eps = draw(st.floats(min_value=1e-12, max_value=1.0, allow_nan=False, allow_infinity=False))
    slope = draw(st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False))
    fixed = draw(st.booleans())
    return fusegen.Spec(input_size, hidden, groups, eps=eps, negative_slope=slope), fixed


def _bound_names(body):
    """Names bound at module level, including inside top-level if/try/with/for blocks (not in defs)."""
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if not isinstance(node, ast.With) else
                       [i.optional_vars for i in node.items if i.optional_vars is not None])
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        for attr in ("body", "orelse", "finalbody"):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and hasattr(node, attr):
                names |= _bound_names(getattr(node, attr))
        for handler in getattr(node, "handlers", []):
            names |= _bound_names(handler.body)
    return names


def _imported_modules(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, 0
        elif isinstance(node, ast.ImportFrom):
            yield node.module or "", node.level


def _assert_same_state(ref, new):
    a, b = ref.state_dict(), new.state_dict()
    assert list(a) == list(b), (list(a), list(b))
    for k in a:
        assert a[k].shape == b[k].shape and a[k].dtype == b[k].dtype, k
        assert torch.equal(a[k], b[k]), k
    assert [n for n, _ in ref.named_parameters()] == [n for n, _ in new.named_parameters()]


def _other_valid_sizes(spec):
    i, h, g = spec.input_size, spec.hidden_size, spec.num_groups
    others = [(i + 1, h, g), (i, 2 * h, 2 * g), (i, h * 2, g)]
    if g > 1:
        others.append((i, h, 1))
    return others


@pytest.fixture(scope="module")
def reference():
    return reference_namespace()


@given(case=valid_specs(), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_module_property(case, seed, reference, monkeypatch):
    spec, fixed = case
    p = fusegen.plan(spec, fixed_sizes=fixed)
    text = fusegen.render(p)

    # it parses and depends on nothing but torch and the standard library
    tree = ast.parse(text)
    for name, level in _imported_modules(tree):
        assert level == 0, f"relative import of {name!r}"
        root = name.split(".")[0]
        assert root == "torch" or root in sys.stdlib_module_names, f"imports {name!r}"
    # and stays out of the reference's way when exec'd into its namespace
    bound = _bound_names(tree.body)
    for name in REFERENCE_NAMES + ("batch_size", "input_size", "hidden_size", "num_groups"):
        assert name not in bound, f"generated module defines top-level {name!r}"
    assert "ModelNew" in bound

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        cache = tmp / "cache"
        cache.mkdir(mode=0o700)
        monkeypatch.setenv("FUSEGEN_CACHE_DIR", str(cache))
        path = tmp / (p.module_name + ".py")
        path.write_text(text)
        mod = import_file(path)
        for name in REFERENCE_NAMES:
            assert not hasattr(mod, name), name
        assert (mod.INPUT_SIZE, mod.HIDDEN_SIZE, mod.NUM_GROUPS) == (spec.input_size, spec.hidden_size,
                                                                     spec.num_groups)
        assert mod.KERNEL_URI == p.kernel_uri and mod.GROUP_STRATEGY == p.group_strategy

        args = (spec.input_size, spec.hidden_size, spec.num_groups)
        torch.manual_seed(seed)
        ref = reference["Model"](*args)
        torch.manual_seed(seed)
        new = mod.ModelNew(*args)
        _assert_same_state(ref, new)
        # the reference's extra constructor arguments are accepted too
        torch.manual_seed(seed)
        ref2 = reference["Model"](*args, spec.eps, spec.negative_slope)
        torch.manual_seed(seed)
        new2 = mod.ModelNew(*args, spec.eps, spec.negative_slope)
        _assert_same_state(ref2, new2)
        assert new2.gn.eps == spec.eps and new2.leaky_relu.negative_slope == spec.negative_slope

        for other in _other_valid_sizes(spec):
            with pytest.raises(ValueError) as info:
                mod.ModelNew(*other)
            assert "fusegen render --input {} --hidden {} --groups {}".format(*other) in str(info.value)

        batch = 2
        with pytest.raises(ValueError, match="CUDA"):
            new(torch.zeros(batch, spec.input_size))
        for bad in (torch.zeros(batch, spec.input_size + 1), torch.zeros(spec.input_size),
                    torch.zeros(batch, spec.input_size, 1)):
            with pytest.raises(ValueError) as info:
                new(bad)
            assert f"(batch, {spec.input_size})" in str(info.value), str(info.value)

        assert list(cache.iterdir()) == [], "importing or constructing the module compiled something"


def test_state_dicts_load_both_ways(tmp_path):
    """ModelNew.load_state_dict(Model().state_dict()) and the reverse: the same keys, shapes and values."""
    ns = reference_namespace()
    module = import_file(fusegen.write_module(fusegen.plan(fusegen.Spec(48, 64, 4)), tmp_path))
    torch.manual_seed(0)
    ref = ns["Model"](48, 64, 4)
    torch.manual_seed(1)
    new = module.ModelNew(48, 64, 4)
    assert not torch.equal(ref.fc.weight, new.fc.weight)  # different seeds: the load below must do the work
    assert str(new.load_state_dict(ref.state_dict())) == "<All keys matched successfully>"
    _assert_same_state(ref, new)
    torch.manual_seed(2)
    back = ns["Model"](48, 64, 4)
    with torch.no_grad():
        new.gn.weight.mul_(3)  # a trained-looking change travels back
    back.load_state_dict(new.state_dict())
    _assert_same_state(new, back)
    # a state dict of another size fails the way torch's own modules do, naming the parameter
    with pytest.raises(RuntimeError, match="size mismatch for fc.weight"):
        new.load_state_dict(ns["Model"](32, 64, 4).state_dict())


def test_tf32_on_hopper_reads_scaled_fp16_planes():
    """tf32 on sm_90 runs the 16-bit wgmma engine over scaled fp16 planes (Plan.plane), on its 256-row tile: the
    tuning table's tf32 entry was timed on the TF32 engine's mainloop and does not carry over; sm_80 keeps TF32."""
    spec = fusegen.Spec(8192, 8192, 512, precision="tf32")
    p = fusegen.plan(spec, gpu="NVIDIA H200", arch=(9, 0))
    assert p.scaled and p.plane.name == "float16" and p.mainloop == "wgmma_f16s" and p.wgmma_template == "wgmma_half"
    assert (p.tile.block_m, p.tile.block_n, p.tuned_for) == (256, 128, "")
    assert p.mma_template == "mma_tf32" and p.operand.name == "float32"  # (the fallbacks read the fp32 operands)
    assert not fusegen.plan(spec, arch=(8, 0)).scaled
    assert "fp16 plane" in explain(p) and "128.1 MiB" in explain(p)
    source = fusegen.render_cuda(p)
    assert "unscale<Wgmma>" in source and "scale_rows_kernel" in source and "split_rows_kernel" not in source


def test_the_explained_weight_plane_size_is_the_kernels():
    """explain's size of the kept weight planes repeats the launchers' layout in Python (planes, scales, the
    fingerprint and its flags): checked against the constants of the rendered source."""
    import re

    from fusegen.codegen.explain import _weight_plane_bytes

    for precision, planes in (("tf32", 1), ("3xtf32", 2)):
        for n, k in ((520, 1000), (8201, 1030)):
            p = fusegen.plan(fusegen.Spec(k, n, 1, precision=precision), arch=(9, 0), fixed_sizes=False)
            source = fusegen.render_cuda(p)
            consts = {name: int(v) for name, v in re.findall(r"\b([A-Z_]+) = (\d+)[,;]", source)}
            assert consts["MATRIX_PLANES"] == planes
            assert "return plane_floats(N, K, N) + FINGERPRINT + FINGERPRINT_BLOCKS;" in source
            assert "constexpr int LD_ALIGN = 16 / (int)sizeof(plane_t);" in source  # (8 fp16 values)
            pad = consts["SCALE_PAD"]
            floats = (-(-(planes * n * (-(-k // 8) * 8) * 2) // 16) * 4 + 2 * (-(-n // pad) * pad) +
                      consts["FINGERPRINT_BLOCKS"] * consts["ROW_THREADS"] * consts["FINGERPRINT_EACH"] +
                      consts["FINGERPRINT_BLOCKS"])
            assert _weight_plane_bytes(p) == 4 * floats, (precision, n, k)


def test_3xtf32_on_hopper_reads_two_scaled_fp16_planes():
    """3xtf32 on sm_90 runs the 16-bit wgmma engine over two scaled fp16 planes an operand (3xfp16: hi and lo of one
    scale, three products), on a 128 x 128 tile of three stages, with fp32 totals every 64 of K and the fp64
    GroupNorm statistics of the fp32-accurate plans; the tuning table's 3xtf32 entry, timed on the TF32 engine, does
    not carry over; scaled_planes=False keeps the TF32 engine (and its tuned tile); sm_80 keeps 3xTF32."""
    spec = fusegen.Spec(8192, 8192, 512)
    p = fusegen.plan(spec, gpu="NVIDIA H200", arch=(9, 0))
    assert p.scaled and p.pieces == 2 and p.mainloop == "wgmma_3xf16s" and p.wgmma_template == "wgmma_half"
    assert (p.tile.block_m, p.tile.block_n, p.tile.stages, p.tuned_for) == (128, 128, 3, "")
    assert p.promote_every_k == 64 and p.statistics.name == "float64" and p.mma_template == "mma_tf32"
    assert p.tile.plane_smem_bytes(2) <= p.tile.SMEM_LIMIT < fusegen.WgmmaTile(128, 128, 4).plane_smem_bytes(2)
    old = fusegen.plan(spec, gpu="NVIDIA H200", arch=(9, 0), scaled_planes=False)
    assert old.mainloop == "wgmma_tf32" and not old.scaled and old.pieces == 0 and old.tuned_for == "NVIDIA H200"
    words = " ".join(explain(p).split())
    assert "two planes (hi and lo)" in words and "256.1 MiB" in words
    source = fusegen.render_cuda(p)
    # the weight's and dz's column planes split SAFE (an Inf of x meets them), x's and dz's rows to nearest; the
    # planes as 3-D tensor maps; the small products before hi x hi
    assert "MATRIX_PLANES = 2" in source and "static constexpr int PLANES = 2" in source
    assert "scale_rows(w, sw0, sw1, N, K, nullptr, &buffer, &wp, s, true, changed)" in source
    assert "scale_cols(dz, N, M, N, xp->scale, at, dp, s, true)" in source
    assert "cp.async.bulk.tensor.3d" in source and "split_value<SAFE>" in source
    assert p.module_name != old.module_name and p.kernel_uri != old.kernel_uri


def test_3xfp16_on_mma_sync_is_sm80s_default():
    """3xtf32 on sm_80 runs its big GEMMs on mma.sync over two scaled fp16 planes (engine Planes: the 16-bit engine's
    two-plane form, mainloop mma_3xf16s), the fp32 3xTF32 engine keeping small and narrow ones (THREE_FP16_MMA:
    measured 0.58x the 3xTF32 module's step); plan(scaled_planes=False) keeps 3xTF32; tf32 does not take it."""
    spec = fusegen.Spec(8192, 8192, 512)
    p = fusegen.plan(spec, arch=(8, 0))
    assert p == fusegen.plan(spec, arch=(8, 0), scaled_planes=True)
    assert p.scaled and p.scaled_mma and not p.wgmma and p.pieces == 2 and p.mainloop == "mma_3xf16s"
    assert p.mma_template == "mma_tf32" and p.promote_every_k == 64 and p.keeps_x_planes
    assert p.schedule_engines[7] == "mma_3xf16s m128n128k32w2x4s3" and p.schedule_engines[1].startswith("mma_tf32")
    from fusegen.plan.planner import THREE_FP16_MMA
    old = fusegen.plan(spec, arch=(8, 0), scaled_planes=False)
    assert THREE_FP16_MMA is True and not old.scaled and old.mainloop == "mma_tf32" and not old.keeps_x_planes
    assert not fusegen.plan(fusegen.Spec(8192, 8192, 512, precision="tf32"), arch=(8, 0), scaled_planes=True).scaled
    source = fusegen.render_cuda(p)
    assert "using MmaPlanes = MmaHalfEngine<128, 2, 4, 32, 3, 2, plane_t>;" in source
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in source and "case Engine::Planes:" in source
    assert "return split_schedule<MmaPlanes>(Engine::Planes, rows, cols, reduce, 1);" in source
    words = " ".join(explain(p).split())
    assert "`mma_3xf16s`" in words and "--planes off" in words
