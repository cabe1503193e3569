"""SigLIP's towers: CLIP's blocks (GELU-tanh MLPs) without CLIP's vision pre-norm. The text tower pools its last token
after the final LayerNorm through ``head`` into the shared embedding space, which keeps its size
(``projection_size``). The vision tower's final LayerNorm feeds a multihead-attention pooling head: a learned probe
queries the tokens through ``nn.MultiheadAttention`` (q|k|v packed in ``in_proj``, the tower's number of heads and
head size), then a pre-LayerNorm MLP with a residual, like a block; its output (``pooler_output``, SiglipModel's image
embeddings) lives in the grown hidden size. SiglipForImageClassification's classifier reads the mean of the final
LayerNorm's tokens; its sizes are in ``vision_config``."""

import dataclasses

from hfgrow.recipe import Packed, Recipe, TensorRule, embedding, linear, norm, reads, writes

from .clip import FIELDS, HIDDEN, SPACES, STACKS, TOWERS, encoder, text_tower
from .vit import conv2d

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

REFUSED = {"SiglipModel": f"{TOWERS} and are coupled: the image embeddings are the vision tower's pooled output at its "
                          "hidden size, so the text head's projection_size would have to grow with the vision tower's hidden size"}
