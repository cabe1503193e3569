"""SigLIP's towers: CLIP's blocks (GELU-tanh MLPs) without CLIP's vision pre-norm. The text tower pools its last token
after the final LayerNorm through ``head`` into the shared embedding space, which keeps its size
(``projection_size``). The vision tower's final LayerNorm feeds a multihead-attention pooling head: a learned probe
queries the tokens through ``nn.MultiheadAttention`` (q|k|v packed in ``in_proj``, the tower's number of heads and
head size), then a pre-LayerNorm MLP with a residual, like a block; its output (``pooler_output``, SiglipModel's image
embeddings) lives in the grown hidden size. SiglipForImageClassification's classifier reads the mean of the final
LayerNorm's tokens; its sizes are in ``vision_config``."""

import dataclasses

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import Packed, Recipe, TensorRule, embedding, keep, linear, norm, reads, writes

from .clip import FIELDS, HIDDEN, SPACES, STACKS, encoder, text_tower, tower_outputs
from .vit import conv2d
from . import tiny
from .tiny import like

TEXT = Recipe(
    name="siglip_text_model",
    model_types=("siglip_text_model",),
    classes=("SiglipTextModel",),
    prefix="text_model",
    stacks=STACKS,
    config=FIELDS,
    spaces=SPACES,
    outputs={**HIDDEN, "last_hidden_state": "final", "pooler_output": None},
    body=(*text_tower(), *linear("head", None, "final")),
)

HEAD = "head"
NORMALISED = ("SiglipModel normalises its image embeddings, the pooling head's output at the vision hidden size, where "
              "every unit's copies must count alike")
VISION = Recipe(
    name="siglip_vision_model",
    model_types=("siglip_vision_model",),
    classes=("SiglipVisionModel",),
    prefix="vision_model",
    stacks=STACKS,
    config=FIELDS,
    spaces=SPACES,
    outputs={**HIDDEN, "last_hidden_state": "final", "pooler_output": "hidden"},
    body=(
        *conv2d("embeddings.patch_embedding", "hidden", None),
        *embedding("embeddings.position_embedding", "hidden"),
        *encoder(),
        *norm("post_layernorm", "final", input="hidden"),
        # the pooling head: the probe is a query token beside the final norm's, so it lives in that space
        TensorRule(f"{HEAD}.probe", (None, None, writes("final"))),
        TensorRule(f"{HEAD}.attention.in_proj_weight", (Packed((writes("q"), writes("k"), writes("v"))), reads("final"))),
        TensorRule(f"{HEAD}.attention.in_proj_bias", (Packed((writes("q"), writes("k"), writes("v"))),)),
        *linear(f"{HEAD}.attention.out_proj", "hidden", "o"),
        *norm(f"{HEAD}.layernorm", "hidden"),
        *linear(f"{HEAD}.mlp.fc1", "ffn", "hidden"),
        *linear(f"{HEAD}.mlp.fc2", "hidden", "ffn"),
    ),
)

IMAGE_CLASSIFICATION = VISION.extend(
    name="siglip_image_classification", model_types=("siglip",), classes=("SiglipForImageClassification",),
    config=dataclasses.replace(FIELDS, sub="vision_config"),
    heads=linear("classifier", None, "final"),
)

# both towers; the image embeddings are the pooling head's output at the vision hidden size, so the text head writes into
# the vision tower's hidden space and its projection_size follows that size: whole multiples (both embeddings are
# normalised, and a unit's copies must all count alike), and the normalised embeddings are then the small ones' copies
# divided by √k, whose scores (logits_per_image, logits_per_text) are the small model's
MODEL = Recipe(
    name="siglip", model_types=("siglip",), classes=("SiglipModel",), spaces={},
    config=dataclasses.replace(FIELDS, twins={"text_config.projection_size": "vision_config.hidden_size"}),
    towers=(("text_config", TEXT), ("vision_config", VISION.extend(constraints=(WholeMultiplesOnly(NORMALISED),)))),
    outputs={**tower_outputs("text_model_output", TEXT, "text_config"), **tower_outputs("vision_model_output", VISION, "vision_config"),
             "text_model_output.pooler_output": "vision_config.hidden"},
    body=(*keep("logit_scale"), *keep("logit_bias"),
          *linear("text_model.head", "vision_config.hidden", "text_config.final")),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["siglip_text_model"] = like(tiny.TEXT, projection_size=16)
TINY["siglip_vision_model"] = tiny.VISION
TINY["siglip"] = {"text_config": TINY["siglip_text_model"], "vision_config": TINY["siglip_vision_model"],
                  "num_labels": 3}
