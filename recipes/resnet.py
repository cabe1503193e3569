"""ResNet: a convolutional stem (embedding_size channels, a batch norm, a ReLU, max pooling), then stages of
hidden_sizes[i] channels made of bottleneck blocks (1×1 to a quarter of the width, 3×3, 1×1 back) or basic ones (two
3×3), each convolution followed by a batch norm, the first block of a stage with a projection shortcut from the previous
stage's width (docs/design.md §Stages). A batch norm in evaluation is a per-channel affine map of the running mean and
variance: whole copies repeat the four vectors. A ReLU follows each residual sum, so the stream's copies carry 1: whole
factors and the copy convention only (the batch norms' eps is fixed in the code).

RegNet: the same stem, shortcuts and batch norms; X blocks are 1×1, a grouped 3×3 (groups_width channels per group, grown
by the factor: the number of groups is kept, and each group's input axis is laid out as one group's channels) and 1×1; Y
blocks add squeeze-excitation before the last 1×1 (a per-channel sigmoid gate from a quarter of the block's input width)."""

from hfgrow.recipe import STAGE, By, ConfigFields, Kind, Recipe, Space, Stages, TensorRule, linear, reads, writes

from .stages import CONSTRAINTS, STAGES, all_stage_spaces
from .vit import conv2d

LATER = "([1-9]|[1-9][0-9]+)"  # every layer of a stage after its first (the first reads the previous stage's width)


def conv_bn(module: str, out: str, in_: str | None) -> tuple[TensorRule, ...]:
    """A convolution without bias and its batch norm (weight, bias, running mean and variance copied; the count kept)."""
    bn = f"{module}.normalization"
    return (TensorRule(f"{module}.convolution.weight", (writes(out), reads(in_) if in_ else None, None, None)),
            *(TensorRule(f"{bn}.{n}", (writes(out),)) for n in ("weight", "bias", "running_mean", "running_var")),
            TensorRule(f"{bn}.num_batches_tracked", ()))


def stage(i: int) -> tuple[TensorRule, ...]:
    s, prev = f"s{i}", f"s{i - 1}" if i else "stem"
    first, later = f"encoder.stages.{i}.layers.0", f"encoder.stages.{i}.layers.{LATER}"
    return (*conv_bn(f"{first}.shortcut", s, prev), *conv_bn(f"{first}.layer.0", f"{s}.inner", prev),
            *conv_bn(f"{later}.layer.0", f"{s}.inner", s),
            # bottleneck: 3×3 within the inner width, then 1×1 back; basic: the inner width is the stage's, layer.1 ends it
            *conv_bn(f"encoder.stages.{i}.layers.*.layer.1", f"{s}.inner", f"{s}.inner"),
            *conv_bn(f"encoder.stages.{i}.layers.*.layer.2", s, f"{s}.inner"))


RESNET = Recipe(
    name="resnet", model_types=("resnet",), classes=("ResNetModel", "ResNetForImageClassification", "ResNetBackbone"),
    prefix="resnet", constraints=CONSTRAINTS,
    config=ConfigFields(hidden="hidden_size", ffn=None, heads=None, eps=(),
                        stages=Stages(widths="hidden_sizes", ratios={"inner": By("layer_type", {"bottleneck": 0.25, "basic": 1})},
                                      grown={"stem": "embedding_size"})),
    spaces={**all_stage_spaces(attention=False, inner="inner"), "stem": Space("stem", Kind.RESIDUAL),
            "hidden": Space("hidden", Kind.RESIDUAL)},
    outputs={"hidden_states": STAGE, "hidden_states[-1]": STAGE, "last_hidden_state": STAGE, "pooler_output": STAGE,
             "feature_maps": STAGE},
    body=(*conv_bn("embedder.embedder", "stem", None), *(r for i in STAGES for r in stage(i))),
    heads=linear("classifier.1", None, "hidden"),
)


def regnet_stage(i: int) -> tuple[TensorRule, ...]:
    """RegNet's stage i: X blocks (1×1, a grouped 3×3 of groups_width channels per group, 1×1) or Y blocks (squeeze-
    excitation before the last 1×1, a quarter of the block's input width: the previous stage's in its first block)."""
    s, prev = f"s{i}", f"s{i - 1}" if i else "stem"
    first, later, every = f"encoder.stages.{i}.layers.0", f"encoder.stages.{i}.layers.{LATER}", f"encoder.stages.{i}.layers.*"
    return (*conv_bn(f"{first}.shortcut", s, prev), *conv_bn(f"{first}.layer.0", f"{s}.inner", prev),
            *conv_bn(f"{later}.layer.0", f"{s}.inner", s),
            *conv_bn(f"{every}.layer.1", f"{s}.inner", "group"),  # grouped: its input axis is one group's channels
            *conv_bn(f"{every}.layer.2", s, f"{s}.inner"), *conv_bn(f"{every}.layer.3", s, f"{s}.inner"),  # X's, Y's
            *conv2d(f"{first}.layer.2.attention.0", f"{prev}.se", f"{s}.inner"),
            *conv2d(f"{first}.layer.2.attention.2", f"{s}.inner", f"{prev}.se"),
            *conv2d(f"{later}.layer.2.attention.0", f"{s}.se", f"{s}.inner"),
            *conv2d(f"{later}.layer.2.attention.2", f"{s}.inner", f"{s}.se"))


REGNET = Recipe(
    name="regnet", model_types=("regnet",), classes=("RegNetModel", "RegNetForImageClassification"),
    prefix="regnet", constraints=CONSTRAINTS,
    config=ConfigFields(hidden="hidden_size", ffn=None, heads=None, eps=(),
                        stages=Stages(widths="hidden_sizes", ratios={"inner": 1, "se": 0.25},
                                      grown={"stem": "embedding_size", "group": "groups_width"})),
    spaces={**all_stage_spaces(attention=False, inner="inner", se="se"),
            **{name: Space(name, Kind.RESIDUAL if name == "stem" else Kind.ACTIVATION) for name in ("stem", "group", "stem.se")},
            "hidden": Space("hidden", Kind.RESIDUAL)},
    outputs={"hidden_states": STAGE, "hidden_states[-1]": STAGE, "last_hidden_state": STAGE, "pooler_output": STAGE},
    body=(*conv_bn("embedder.embedder", "stem", None), *(r for i in STAGES for r in regnet_stage(i))),
    heads=linear("classifier.1", None, "hidden"),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# ResNet: bottleneck blocks (a quarter of the stage's width inside), batch norms, a ReLU after each residual sum
TINY["resnet"] = {"num_channels": 3, "embedding_size": 8, "hidden_sizes": [8, 16], "depths": [1, 2],
                  "layer_type": "bottleneck", "downsample_in_bottleneck": True, "num_labels": 3,
                  "out_features": ["stage1", "stage2"]}
# RegNet Y: grouped 3×3 convolutions of 4 channels per group, squeeze-excitation at a quarter of the block's input width
TINY["regnet"] = {"num_channels": 3, "embedding_size": 8, "hidden_sizes": [8, 16], "depths": [1, 2], "groups_width": 4,
                  "layer_type": "y", "num_labels": 3}
