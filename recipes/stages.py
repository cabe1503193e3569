"""What hierarchical vision models share (docs/design.md §Stages): spaces per stage, each stage's width its own, all grown by
one whole factor (``hfgrow.recipe.Stages`` declares the config fields). A recipe writes its rules once per stage, for up to
``MAX_STAGES`` stages: the rules of a stage the model does not have match no key."""

from hfgrow.policy import CopyConventionOnly, NoNewBlocks
from hfgrow.recipe import Kind, Space

MAX_STAGES = 6
STAGES = range(MAX_STAGES)
# norms whose eps is fixed in the code (patch merging, downsampling: nn.LayerNorm's 1e-5) read the stages' copies: the
# copies must keep the statistics, c = 1; and each stage's depth is an entry of a list
CONSTRAINTS = (CopyConventionOnly("norms between the stages have their eps fixed in the code"),
               NoNewBlocks("each stage's depth is an entry of a per-stage list (depths), its blocks not one stack"))


def stage_spaces(i: int, attention: bool = True, **more: str) -> dict[str, Space]:
    """Stage i's spaces: ``s{i}`` its stream, and with ``attention`` its queries, keys, values, attention output and
    per-head tables (``s{i}.heads``); ``more``: name → a dimension suffix of the stage (``ffn``), activation spaces."""
    s, dim = f"s{i}", f"stage{i}"
    spaces = {s: Space(dim, Kind.RESIDUAL)}
    if attention:
        spaces.update({f"{s}.q": Space(f"{dim}.attention", Kind.QUERY), f"{s}.k": Space(f"{dim}.attention", Kind.KEY),
                       f"{s}.v": Space(f"{dim}.attention", Kind.VALUE), f"{s}.o": Space(f"{dim}.attention", Kind.VALUE),
                       f"{s}.heads": Space(f"{dim}.heads", Kind.ACTIVATION)})
    spaces.update({f"{s}.{name}": Space(f"{dim}.{suffix}" if suffix else dim, Kind.ACTIVATION) for name, suffix in more.items()})
    return spaces


def all_stage_spaces(attention: bool = True, **more: str) -> dict[str, Space]:
    return {k: v for i in STAGES for k, v in stage_spaces(i, attention, **more).items()}
