"""CLIP's towers: pre-LayerNorm encoders with quick-GELU MLPs. The text tower (causal mask, pooled at each row's EOS
token after its final LayerNorm) and the vision tower (a patch convolution, a class embedding and learned positions,
then ``pre_layrnorm``: its residual stream starts at a LayerNorm, so whole multiples only; ``post_layernorm`` over the
pooled class token). The projections into the shared embedding space (``text_projection``, ``visual_projection``)
keep their output size, so the embeddings, and the image–text scores made of them, are the small model's.

Each tower is a recipe of its own (its config's model_type); CLIPForImageClassification holds the vision tower with
its sizes in ``vision_config`` (``ConfigFields.sub``)."""

import dataclasses

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import (STREAM_FROM_NORM, ConfigFields, Kind, Recipe, Space, TensorRule, block_spaces, embedding, keep,
                           linear, norm, writes)

from .vit import conv2d
from . import tiny
from .tiny import like

FIELDS = ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",))
# a final LayerNorm's output, read by linear layers alone: plain copies, extra units at zero
SPACES = {**block_spaces(), "final": Space("hidden", Kind.ACTIVATION)}
# the hidden states are the blocks' outputs (the first the embeddings', after pre_layrnorm in CLIP's vision tower)
HIDDEN = {"hidden_states": "hidden", "hidden_states[-1]": "hidden"}


LAYER = "encoder.layers.*"
STACKS = (("encoder.layers", "num_hidden_layers", None),)


def encoder() -> tuple[TensorRule, ...]:
    """The blocks of a tower: pre-LayerNorm attention and MLP (keys under the tower's prefix, ``text_model`` or
    ``vision_model``, which a tower's base class leaves out)."""
    b = LAYER
    return (
        *norm(f"{b}.layer_norm1", "hidden"),
        *linear(f"{b}.self_attn.q_proj", "q", "hidden"),
        *linear(f"{b}.self_attn.k_proj", "k", "hidden"),
        *linear(f"{b}.self_attn.v_proj", "v", "hidden"),
        *linear(f"{b}.self_attn.out_proj", "hidden", "o"),
        *norm(f"{b}.layer_norm2", "hidden"),
        *linear(f"{b}.mlp.fc1", "ffn", "hidden"),
        *linear(f"{b}.mlp.fc2", "hidden", "ffn"),
    )


def text_tower() -> tuple[TensorRule, ...]:
    """Token and position embeddings, the blocks, the final LayerNorm (what the pooling and projection read)."""
    return (*embedding("embeddings.token_embedding", "hidden"), *embedding("embeddings.position_embedding", "hidden"),
            *encoder(), *norm("final_layer_norm", "final", input="hidden"))


TEXT = Recipe(
    name="clip_text_model",
    model_types=("clip_text_model",),
    classes=("CLIPTextModel", "CLIPTextModelWithProjection"),
    prefix="text_model",
    stacks=STACKS,
    config=FIELDS,
    spaces=SPACES,
    outputs={**HIDDEN, "last_hidden_state": "final", "pooler_output": "final", "text_embeds": None},
    body=text_tower(),
    heads=linear("text_projection", None, "final", bias=False),
)

VISION = Recipe(
    name="clip_vision_model",
    model_types=("clip_vision_model",),
    classes=("CLIPVisionModel", "CLIPVisionModelWithProjection"),
    constraints=(WholeMultiplesOnly(STREAM_FROM_NORM),),
    prefix="vision_model",
    stacks=STACKS,
    config=FIELDS,
    spaces=SPACES,
    outputs={**HIDDEN, "last_hidden_state": "hidden", "pooler_output": "final", "image_embeds": None},
    body=(
        TensorRule("embeddings.class_embedding", (writes("hidden"),)),
        *conv2d("embeddings.patch_embedding", "hidden", None, bias=False),
        *embedding("embeddings.position_embedding", "hidden"),
        *norm("pre_layrnorm", "hidden"),
        *encoder(),
        *norm("post_layernorm", "final", input="hidden"),
    ),
    heads=linear("visual_projection", None, "final", bias=False),
)

# the vision tower under a classifier that reads the mean of its last hidden state's patch tokens; sizes in vision_config
IMAGE_CLASSIFICATION = VISION.extend(
    name="clip_image_classification", model_types=("clip",), classes=("CLIPForImageClassification",),
    config=dataclasses.replace(FIELDS, sub="vision_config"),
    heads=linear("classifier", None, "hidden"),  # replaces the projection, which the class has not
)


def tower_outputs(output: str, tower: Recipe, sub: str) -> dict[str, str | None]:
    """A tower's outputs as a model of towers returns them (``text_model_output.last_hidden_state``), in its scoped spaces."""
    return {f"{output}.{k}": f"{sub}.{v}" if v else None for k, v in tower.outputs.items()}


# both towers, each by its own sizes; the embeddings and the scores (logits_per_image, logits_per_text) keep their size
MODEL = Recipe(
    name="clip", model_types=("clip",), classes=("CLIPModel",), config=FIELDS, spaces={},
    towers=(("text_config", TEXT), ("vision_config", VISION)),
    outputs={**tower_outputs("text_model_output", TEXT, "text_config"), **tower_outputs("vision_model_output", VISION, "vision_config"),
             # the towers' pooled outputs are the projected embeddings here (get_text_features, get_image_features)
             "text_model_output.pooler_output": None, "vision_model_output.pooler_output": None,
             "text_embeds": None, "image_embeds": None},
    body=keep("logit_scale", ndim=0),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["clip_text_model"] = like(tiny.TEXT, projection_dim=12)
TINY["clip_vision_model"] = like(tiny.VISION, projection_dim=12)
TINY["clip"] = {"text_config": tiny.TEXT, "vision_config": tiny.VISION, "projection_dim": 12, "num_labels": 3}
