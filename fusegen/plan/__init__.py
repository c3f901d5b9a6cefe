"""The planner's face: Plan and plan() (plan/planner.py), the group strategies, the GEMM engines' tiles and
ENGINES (plan/engines.py), the epilogue's StagePlans (plan/epilogue.py); the tuning table is plan/tuning.py; the row-sum
rewrite's RowSumPlan (plan/row_sum.py)."""
from .engines import ENGINES, WGMMA_ARCH, GemmTile, MmaTile, WgmmaTile
from .epilogue import StagePlan, plan_chain, row_team
from .row_sum import RowSumPlan
from .planner import COLS, FRAGMENT, NO_NORM, ROWS, TILE_LOCAL, TINY_GROUP, TWO_STAGE, Plan, plan

__all__ = ["GemmTile", "MmaTile", "WgmmaTile", "ENGINES", "StagePlan", "plan_chain", "row_team", "Plan", "RowSumPlan", "plan",
           "FRAGMENT", "TILE_LOCAL", "TWO_STAGE", "NO_NORM", "ROWS", "COLS", "TINY_GROUP", "WGMMA_ARCH"]
