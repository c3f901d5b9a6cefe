"""benchmarks/sass_report.py on the CPU: cuobjdump's listing parsed into each kernel's instruction counts (a
predicated instruction counted under its opcode, tensor-core instructions by shape, kernels of each arch apart)."""
from helpers import load_script


LISTING = """
Fatbin elf code:
================
arch = sm_90a
	code for sm_90a
		Function : _ZN2fg20wgmma_forward_kernelINS_5WgmmaEEEvv
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */
        /*0010*/                   UTMALDG.3D [UR8], [UR4] ;               /* 0x0000000804007fb4 */
        /*0020*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], R24 ; /* 0x00e00000041879f0 */
        /*0030*/              @!P0 HGMMA.64x128x16.F32 R24, gdesc[UR8], R24, gsb0 ; /* 0x00e00000081879f0 */
        /*0040*/                   STL [R1], R24 ;                         /* 0x0000001801007387 */
        /*0050*/                   EXIT ;                                  /* 0x000000000000794d */
		Function : _ZN2fg25weight_fingerprint_kernelEPKfxxiiPjPii
        /*0000*/                   LDG.E.CONSTANT R2, desc[UR4][R2.64] ;   /* 0x0000000402027981 */
        /*0010*/               @P0 FFMA R3, R2, R2, R3 ;                   /* 0x0000000202037223 */
        /*0020*/                   EXIT ;                                  /* 0x000000000000794d */
"""


def _sass():
    return load_script("sass_report")


def test_the_listing_gives_each_kernels_counts():
    sass = _sass()
    functions = sass.parse(LISTING)
    forward = functions[("sm_90a", "_ZN2fg20wgmma_forward_kernelINS_5WgmmaEEEvv")]
    assert forward["HGMMA"] == 2 and forward["HGMMA.64x128x16.F32"] == 2  # (the predicated one too)
    assert forward["STL"] == 1 and forward["UTMALDG"] == 1 and forward["EXIT"] == 1
    fingerprint = functions[("sm_90a", "_ZN2fg25weight_fingerprint_kernelEPKfxxiiPjPii")]
    assert fingerprint["FFMA"] == 1 and fingerprint["LDG"] == 1 and fingerprint["HGMMA"] == 0
    rows = sass.table(functions, "forward").splitlines()
    assert len(rows) == 3 and "| sm_90a | wgmma_forward_kernel<NS_5WgmmaEEEv> | 6 | 2 | 0 | 0 | 0 | 1 | 1 | 0 |" in rows[2]
    assert rows[2].endswith("HGMMA.64x128x16.F32 x2 |")
