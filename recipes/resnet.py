"""ResNet: a convolutional stem (embedding_size channels, a batch norm, a ReLU, max pooling), then stages of
hidden_sizes[i] channels made of bottleneck blocks (1×1 to a quarter of the width, 3×3, 1×1 back) or basic ones (two
3×3), each convolution followed by a batch norm, the first block of a stage with a projection shortcut from the previous
stage's width (docs/design.md §Stages). A batch norm in evaluation is a per-channel affine map of the running mean and
variance: whole copies repeat the four vectors. A ReLU follows each residual sum, so the stream's copies carry 1: whole
factors and the copy convention only (the batch norms' eps is fixed in the code)."""

from hfgrow.recipe import STAGE, By, ConfigFields, Kind, Recipe, Space, Stages, TensorRule, linear, reads, writes

from .stages import CONSTRAINTS, STAGES, all_stage_spaces

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
