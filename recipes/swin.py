"""Swin, Swin v2 and Donut's Swin: hierarchical windowed-attention encoders (docs/design.md §Stages). Stage i is
embed_dim·2^i wide with num_heads[i] heads; each stage's heads grow by the factor and keep head_dim, so every per-head
table (Swin's relative position bias table [distances, heads], Swin v2's logit scale [heads, 1, 1] and the last layer of
its continuous position bias MLP, 2 → 512 → heads) copies whole heads, as T5's per-head biases do.

Between stages, patch merging concatenates 2×2 neighbours (four parts of the stage's width, one after another): Swin
normalises the 4C channels and then reduces them to the next stage's 2C, Swin v2 reduces first and normalises the 2C. The
norms' eps is nn.LayerNorm's 1e-5, fixed in the code, and the embeddings end in a LayerNorm (the stream starts at a norm):
whole factors and the copy convention only. Swin v2's blocks normalise each branch's output before the residual sum (res-
post-norm); its attention is cosine attention (q and k normalised per head: whole heads copied keep it)."""

from hfgrow.recipe import (STAGE, ConfigFields, Kind, Packed, Recipe, Space, Stages, TensorRule, linear, norm, reads,
                           writes)

from .stages import CONSTRAINTS, STAGES, all_stage_spaces
from .vit import conv2d, vector
from .tiny import like


def swin_block(i: int, v2: bool) -> tuple[TensorRule, ...]:
    """Stage i's blocks, under both the current names (q_proj …) and the stored ones (attention.self.query …)."""
    b, s = f"encoder.layers.{i}.blocks.*", f"s{i}"
    a = f"{b}.attention"
    rules = (*norm(f"{b}.layernorm_before", s), *norm(f"{b}.layernorm_after", s),
             *(r for n, name in (("q", "query"), ("k", "key"), ("v", "value"))
               for m in (f"{a}.{n}_proj", f"{a}.self.{name}") for r in linear(m, f"{s}.{n}", s)),
             *(r for m in (f"{a}.o_proj", f"{a}.output.dense") for r in linear(m, s, f"{s}.o")),
             *(r for m in (f"{b}.mlp.fc1", f"{b}.intermediate.dense") for r in linear(m, f"{s}.ffn", s)),
             *(r for m in (f"{b}.mlp.fc2", f"{b}.output.dense") for r in linear(m, s, f"{s}.ffn")))
    if v2:  # a per-head logit scale and the continuous position bias MLP's heads
        mlp = f"{a}.self.continuous_position_bias_mlp"
        return rules + (TensorRule(f"{a}.self.logit_scale", (writes(f"{s}.heads"), None, None)),
                        *linear(f"{mlp}.0", None, None), *linear(f"{mlp}.2", f"{s}.heads", None, bias=False))
    return rules + tuple(TensorRule(f"{m}.relative_position_bias_table", (None, writes(f"{s}.heads")))
                         for m in (f"{a}.relative_position_bias", f"{a}.self")) + (
        TensorRule(f"{a}.self.relative_position_index", (None, None)),)  # stored by Donut's: distances, kept


def merging(i: int, v2: bool) -> tuple[TensorRule, ...]:
    """Patch merging after stage i: four neighbours of its width side by side, normalised (Swin v2: after) and reduced to
    stage i + 1's width."""
    d, four = f"encoder.layers.{i}.downsample", lambda role: Packed((role,) * 4)
    if v2:
        return (TensorRule(f"{d}.reduction.weight", (writes(f"s{i + 1}"), four(reads(f"s{i}")))), *norm(f"{d}.norm", f"s{i + 1}"))
    return (TensorRule(f"{d}.norm.(weight|gamma)", (four(writes(f"s{i}.merge")),), norm_input=f"s{i}"),
            TensorRule(f"{d}.norm.(bias|beta)", (four(writes(f"s{i}.merge")),)),
            TensorRule(f"{d}.reduction.weight", (writes(f"s{i + 1}"), four(reads(f"s{i}.merge")))))


def swin(name: str, model_types: tuple[str, ...], classes: tuple[str, ...], prefix: str, v2: bool = False) -> Recipe:
    return Recipe(
        name=name, model_types=model_types, classes=classes, prefix=prefix, constraints=CONSTRAINTS,
        config=ConfigFields(hidden="hidden_size", ffn=None, heads=None, eps=("layer_norm_eps",),
                            stages=Stages(widths="embed_dim", count="depths", heads="num_heads", ratios={"ffn": "mlp_ratio"})),
        spaces={**all_stage_spaces(ffn="ffn", merge=""), "hidden": Space("hidden", Kind.RESIDUAL),
                "final": Space("hidden", Kind.ACTIVATION)},
        outputs={"hidden_states": STAGE, "hidden_states[-1]": STAGE, "reshaped_hidden_states": STAGE,
                 "last_hidden_state": "final", "pooler_output": "final", "feature_maps": STAGE, "reconstruction": None},
        body=(
            *conv2d("embeddings.patch_embeddings.projection", "s0", None),
            *norm("embeddings.norm", "s0"),
            *vector("embeddings.mask_token", "s0", 3), *vector("embeddings.position_embeddings", "s0", 3),
            *(r for i in STAGES for r in swin_block(i, v2)), *(r for i in STAGES[:-1] for r in merging(i, v2)),
            *norm("layernorm", "final", input="hidden"),
            # a backbone's norm of each stage's output (stage1 …)
            *(r for i in STAGES for r in norm(f"hidden_states_norms.stage{i + 1}", f"s{i}.merge", input=f"s{i}")),
        ),
        heads=(*linear("classifier", None, "final"), *conv2d("decoder.0", None, "final")),
    )


SWIN = swin("swin", ("swin",), ("SwinModel", "SwinForImageClassification", "SwinForMaskedImageModeling", "SwinBackbone"), "swin")
SWINV2 = swin("swinv2", ("swinv2",), ("Swinv2Model", "Swinv2ForImageClassification", "Swinv2ForMaskedImageModeling",
                                      "Swinv2Backbone"), "swinv2", v2=True)
DONUT_SWIN = swin("donut-swin", ("donut-swin",), ("DonutSwinModel", "DonutSwinForImageClassification"), "donut")


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# hierarchical: two stages over 8×8 images (4 × 4 patches of 2×2 pixels, merged to 2 × 2), windows of 2
TINY["swin"] = {"image_size": 8, "patch_size": 2, "num_channels": 3, "embed_dim": 8, "depths": [1, 2],
                "num_heads": [2, 4], "window_size": 2, "mlp_ratio": 2.0, "layer_norm_eps": 0.05, "encoder_stride": 4,
                "use_absolute_embeddings": True, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
                "drop_path_rate": 0.0, "num_labels": 3, "out_features": ["stage1", "stage2"]}
# (Swin v2's and Donut's absolute position tables hold one position more than the patches, which their forward cannot add: 5.24)
TINY["swinv2"] = like(TINY["swin"], use_absolute_embeddings=False)
# (Swin v2's and Donut's absolute position tables hold one position more than the patches, which their forward cannot add: 5.24)
TINY["donut-swin"] = TINY["swinv2"]
