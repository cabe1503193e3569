"""PoolFormer: stages of hidden_sizes[i] channels, each entered by an overlapping patch convolution from the previous
stage's channels (docs/design.md §Stages); a block normalises with a GroupNorm of one group (over every channel and
position: whole copies keep its mean and variance, eps 1e-5 fixed in the code), mixes tokens by average pooling minus the
input (per channel), and adds it through a per-channel layer scale; then a second GroupNorm, a 1×1-convolution MLP of
mlp_ratio × the width, and a second layer scale. The classifier normalises the last stage with a GroupNorm and reads its
spatial mean. Whole factors and the copy convention only."""

from hfgrow.recipe import STAGE, ConfigFields, Kind, Recipe, Space, Stages, TensorRule, linear, norm, writes

from .stages import CONSTRAINTS, STAGES, all_stage_spaces
from .vit import conv2d


def stage(i: int) -> tuple[TensorRule, ...]:
    b, s = f"encoder.block.{i}.*", f"s{i}"
    return (*conv2d(f"encoder.patch_embeddings.{i}.projection", s, f"s{i - 1}" if i else None),
            *norm(f"{b}.before_norm", f"{s}.n1", input=s), TensorRule(f"{b}.layer_scale_1", (writes(f"{s}.gain"),)),
            *norm(f"{b}.after_norm", f"{s}.n2", input=s), *conv2d(f"{b}.output.conv1", f"{s}.ffn", f"{s}.n2"),
            *conv2d(f"{b}.output.conv2", s, f"{s}.ffn"), TensorRule(f"{b}.layer_scale_2", (writes(f"{s}.gain"),)))


POOLFORMER = Recipe(
    name="poolformer", model_types=("poolformer",), classes=("PoolFormerModel", "PoolFormerForImageClassification"),
    prefix="poolformer", constraints=CONSTRAINTS,
    config=ConfigFields(hidden="hidden_size", ffn=None, heads=None, eps=(),
                        stages=Stages(widths="hidden_sizes", ratios={"ffn": "mlp_ratio"})),
    spaces={**all_stage_spaces(attention=False, ffn="ffn", n1="", n2="", gain=""), "hidden": Space("hidden", Kind.RESIDUAL),
            "final": Space("hidden", Kind.ACTIVATION)},
    outputs={"hidden_states": STAGE, "hidden_states[-1]": STAGE, "last_hidden_state": STAGE},
    body=tuple(r for i in STAGES for r in stage(i)),
    heads=(*norm("norm", "final", input="hidden"), *linear("classifier", None, "final")),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# PoolFormer: overlapping patch convolutions per stage, GroupNorms, pooling token mixers, layer scale
TINY["poolformer"] = {"num_channels": 3, "hidden_sizes": [8, 16], "depths": [1, 2], "patch_sizes": [3, 3],
                      "strides": [2, 2], "padding": [1, 1], "num_encoder_blocks": 2, "mlp_ratio": 2.0,
                      "layer_scale_init_value": 0.5, "num_labels": 3}
