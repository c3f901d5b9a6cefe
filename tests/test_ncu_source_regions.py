"""benchmarks/ncu_source_regions.py on the CPU: an `ncu --page source --csv` export (one block per kernel) summed over
code regions, a predicated instruction counted under its opcode."""
from helpers import REPO, load_script

EXPORT = '''"Kernel Name","void fg::k(int)",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed","stall_wait","stall_barrier","stall_wait (Not Issued)"
"0x100","      HGMMA.64x256x16.F32.BF16 R24, gdesc[UR20], R24","7","7","4","2","5","2"
"0x110","      WARPGROUP.DEPBAR.LE gsb0, 0x1","30","30","4","0","30","0"
"0x120","  @!P0  FADD R3, R4, R5","3","1","8","3","0","1"
"0x130","      FADD R3, R3, R3","1","1","8","1","0","1"
"Kernel Name","void fg::other()",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed","stall_wait","stall_barrier","stall_wait (Not Issued)"
"0x900","      EXIT","1","1","1","1","0","1"
'''


def test_regions_sum_samples_stalls_and_opcodes(tmp_path):
    ncu = load_script("ncu_source_regions")
    path = tmp_path / "source.csv"
    path.write_text(EXPORT)
    kernels = ncu.kernels(path)
    assert list(kernels) == ["void fg::k(int)", "void fg::other()"]
    header, rows = kernels["void fg::k(int)"]
    out = ncu.summarize(header, rows, [("loop", 0x0, 0x20), ("epilogue", 0x20, 0x40)])
    assert out["loop"]["samples"] == 37 and out["loop"]["executed"] == 8
    assert out["loop"]["stalls"]["barrier"] == 35 and out["loop"]["stalls"]["wait"] == 2
    assert out["epilogue"]["ops"] == {"FADD": 16} and out["epilogue"]["op_samples"]["FADD"] == 4


def test_session_44s_forward_epilogue_as_the_perf_notes_quote_it():
    """Run 3's export (committed): the bf16 forward's epilogue, 5766 warp instructions a warp a tile (256 tiles x 8
    consumer warps), as docs/perf-notes.md v0.44 says."""
    ncu = load_script("ncu_source_regions")
    found = ncu.kernels(REPO / "tests/gpu-results/h200-2026-11-28-s44/run3/source.csv.gz")
    name = next(k for k in found if "forward_persistent" in k)
    out = ncu.summarize(*found[name], [("epilogue", 0xfe0, 0x18000)])["epilogue"]
    assert round(out["executed"] / 2048) == 5766
    assert out["ops"]["SHFL.BFLY"] == 384 * 2048
