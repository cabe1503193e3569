"""The side-cars of a growth: what rides along with the weights (sentence-transformers modules, PEFT adapters, a
Trainer's or accelerate's training state) plugs into the pipeline through one small interface.

The pipeline (:mod:`hfgrow.pipeline`: read → plan → grow tensors → write → verify → publish) knows nothing of
any side-car: the API layer (:mod:`hfgrow.api`, :mod:`hfgrow.optim`) picks the components of a growth and hands
them over, and the pipeline calls each at its fixed stages, in order:

1. :meth:`Component.owned_files` before anything is read: the files it writes, which ``--overwrite`` may replace
   and which leave the report's ``not_copied``;
2. :meth:`Component.prepare` once the plan is made, before anything is written: it reads and checks what it needs
   (a :class:`~hfgrow.errors.GrowthError` refuses the growth) and says whether it takes part;
3. :meth:`Component.write` into the temporary folder, before the weights (its problems show before the long part):
   its entries for the report;
4. :meth:`Component.verify` after the weights' verification: its rows in the verification, its say in the verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # annotations only
    from .plan import GrowthPlan

Log = Callable[[str], None]


class Component:
    """One side-car of a growth; every stage does nothing unless a subclass says otherwise."""

    def owned_files(self, src: Path) -> set[str]:
        """The files (paths relative to the grown folder) it writes for ``src``, as far as they are known before
        anything is read; never raises (:meth:`prepare` says what is wrong)."""
        return set()

    def prepare(self, src: Path, plan: GrowthPlan) -> bool:
        """Read and check what it needs before anything is written; a lossy step appends its reason to
        ``plan.approximate`` (the pipeline refuses it without ``allow_lossy``). Returns whether it takes part."""
        return True

    def write(self, src: Path, folder: Path, plan: GrowthPlan) -> dict[str, Any]:
        """Its files into ``folder`` (the temporary folder of the grown checkpoint); returns its report entries."""
        return {}

    def verify(self, src: Path, folder: Path, plan: GrowthPlan, verification: dict[str, Any], log: Log) -> None:
        """Its comparison added to ``verification``, whose ``passed`` it sets to False where its gap is too large."""


def owned_files(components: list[Component], src: Path) -> set[str]:
    """Every file the components write for ``src``."""
    return set().union(*(c.owned_files(src) for c in components)) if src.is_dir() else set()
