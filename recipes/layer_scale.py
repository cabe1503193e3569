"""Pre-LayerNorm image encoders with layer scale: each residual branch's output is multiplied by a learned per-channel
gain before it is added to the stream (DINOv2's ``layer_scale1/2.lambda1``, BEiT's and data2vec-vision's ``lambda_1/2``).

The branch output (the output projection's, the MLP's second linear's) is laid out like the stream: copies that carry the
convention's c. The gain multiplies it unit by unit, so its copies carry 1 whatever c is (the ``gain`` space, copied as it
is): γ'·(c·E o) = c·E(γ o). An extra unit (a width that is no multiple) would have to hold the token mean of γ ⊙ o over
the units, which the mean of o times any gain is not: whole multiples only.

DINOv2 (and with registers: learned register tokens beside the class token): ViT's embeddings, blocks ``norm1``, q/k/v/o,
``norm2``, a GELU MLP of ``mlp_ratio`` × hidden (or, with ``use_swiglu_ffn``, giant's, a SwiGLU of two thirds of it rounded
up to a multiple of 8, gate|up packed in ``weights_in``): no config field holds its width, which transformers derives
from the hidden size, so the grown MLP is as wide as the grown hidden size makes it (a width that is no multiple of the
small one's grows as any FFN does, its extra units silent), a final LayerNorm; the
classifier reads the class token and the mean of the patch tokens side by side (two blocks of the hidden width).

BEiT and data2vec-vision: per-head relative position bias tables ([distances, heads]: whole heads copied, kept under
head_dim growth), in every block or one shared, optional absolute positions; the key has no bias. With mean pooling the
final norm is the identity and the pooler's LayerNorm reads the mean of the stream's patch tokens; else the final norm's
class token is pooled. The masked image modelling head normalises the last hidden state again and predicts visual tokens.
"""

from typing import Any, Mapping

from hfgrow.policy import CopyConventionOnly, WholeMultiplesOnly
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, linear, norm, reads, writes

from .vit import conv2d, vector
from . import tiny
from .tiny import like

LAYER_SCALE = ("layer scale: each residual branch is multiplied by a per-channel gain, and an extra unit (at the stream's "
               "token mean) would need the mean of the gained branch, which no gain of the branch's mean gives")
SPACES = {**block_spaces(), "final": Space("hidden", Kind.ACTIVATION), "gain": Space("hidden", Kind.ACTIVATION),
          "heads": Space("heads", Kind.ACTIVATION)}
HIDDEN = {"hidden_states": "hidden", "hidden_states[-1]": "hidden"}


def embeddings() -> tuple[TensorRule, ...]:
    """The patch convolution and the learned vectors of the stream (class, mask and register tokens, positions)."""
    return (*conv2d("embeddings.patch_embeddings.projection", "hidden", None), *vector("embeddings.cls_token", "hidden", 3),
            *vector("embeddings.position_embeddings", "hidden", 3))


def dinov2_block(b: str) -> tuple[TensorRule, ...]:
    return (*norm(f"{b}.norm1", "hidden"),
            *(r for n in "qkv" for r in linear(f"{b}.attention.attention.{dict(q='query', k='key', v='value')[n]}", n, "hidden")),
            *linear(f"{b}.attention.output.dense", "hidden", "o"),
            *vector(f"{b}.layer_scale1.lambda1", "gain", 1), *norm(f"{b}.norm2", "hidden"),
            *linear(f"{b}.mlp.fc1", "ffn", "hidden"), *linear(f"{b}.mlp.fc2", "hidden", "ffn"),
            TensorRule(f"{b}.mlp.weights_in.weight", (Packed((writes("ffn"), writes("ffn"))), reads("hidden"))),
            TensorRule(f"{b}.mlp.weights_in.bias", (Packed((writes("ffn"), writes("ffn"))),)),
            *linear(f"{b}.mlp.weights_out", "hidden", "ffn"),
            *vector(f"{b}.layer_scale2.lambda1", "gain", 1))


def dinov2_mlp(config: Mapping[str, Any], hidden: int) -> int:
    """The MLP's width as transformers derives it: mlp_ratio × hidden, or with use_swiglu_ffn, two thirds of that rounded
    up to a multiple of 8."""
    width = int(hidden * config.get("mlp_ratio", 4))
    return (int(width * 2 / 3) + 7) // 8 * 8 if config.get("use_swiglu_ffn") else width


DINOV2 = Recipe(
    name="dinov2",
    model_types=("dinov2",),
    classes=("Dinov2Model", "Dinov2ForImageClassification"),
    prefix="dinov2",
    constraints=(WholeMultiplesOnly(LAYER_SCALE),),
    stacks=(("encoder.layer", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", ffn_derived=dinov2_mlp, heads="num_attention_heads",
                        eps=("layer_norm_eps",)),
    spaces=SPACES,
    outputs={**HIDDEN, "last_hidden_state": "final", "pooler_output": "final"},
    body=(*embeddings(), *vector("embeddings.mask_token", "hidden", 2), *dinov2_block("encoder.layer.*"), *norm("layernorm", "final", input="hidden")),
    heads=(TensorRule("classifier.weight", (None, Packed((reads("final"), reads("final"))))), TensorRule("classifier.bias", (None,))),
)
DINOV2_WITH_REGISTERS = DINOV2.extend(
    name="dinov2_with_registers", model_types=("dinov2_with_registers",), prefix="dinov2_with_registers",
    classes=("Dinov2WithRegistersModel", "Dinov2WithRegistersForImageClassification"),
    body=vector("embeddings.register_tokens", "hidden", 3),
)


MIM_NORM = ("the masked image modelling head's LayerNorm reads the stream or the final norm's output as use_mean_pooling "
            "says, stored under the final norm's name")


def bias_table(module: str) -> tuple[TensorRule, ...]:
    """A relative position bias table, [distances, heads]: whole heads copied (kept under head_dim growth)."""
    return (TensorRule(f"{module}.relative_position_bias_table", (None, writes("heads"))),)


def beit_block(b: str) -> tuple[TensorRule, ...]:
    a = f"{b}.attention.attention"
    return (*norm(f"{b}.layernorm_before", "hidden"), *linear(f"{a}.query", "q", "hidden"),
            *linear(f"{a}.key", "k", "hidden", bias=False), *linear(f"{a}.value", "v", "hidden"),
            *bias_table(f"{a}.relative_position_bias"),
            *linear(f"{b}.attention.output.dense", "hidden", "o"), *vector(f"{b}.lambda_1", "gain", 1),
            *norm(f"{b}.layernorm_after", "hidden"), *linear(f"{b}.intermediate.dense", "ffn", "hidden"),
            *linear(f"{b}.output.dense", "hidden", "ffn"), *vector(f"{b}.lambda_2", "gain", 1))


BEIT = Recipe(
    name="beit",
    model_types=("beit",),
    classes=("BeitModel", "BeitForImageClassification", "BeitForMaskedImageModeling"),
    prefix="beit",
    constraints=(WholeMultiplesOnly(LAYER_SCALE), CopyConventionOnly(MIM_NORM)),
    stacks=(("encoder.layer", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)),
    spaces=SPACES,
    # the final norm is the identity under mean pooling, a LayerNorm otherwise: whole multiples make the two layouts one
    outputs={**HIDDEN, "last_hidden_state": "final", "pooler_output": "final"},
    body=(*embeddings(), *vector("embeddings.mask_token", "hidden", 3), *beit_block("encoder.layer.*"),
          *bias_table("encoder.relative_position_bias"),  # one table shared by all blocks
          *norm("layernorm", "final", input="hidden"), *norm("pooler.layernorm", "final", input="hidden")),
    # the masked image modelling head's LayerNorm is stored as ``layernorm``, matched by the final norm's rule
    heads=(*linear("classifier", None, "final"), *linear("lm_head", None, "final")),
)
DATA2VEC_VISION = BEIT.extend(
    name="data2vec-vision", model_types=("data2vec-vision",), prefix="data2vec_vision",
    classes=("Data2VecVisionModel", "Data2VecVisionForImageClassification"),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["dinov2"] = like(tiny.VIT, "intermediate_size", mlp_ratio=4)
TINY["dinov2_with_registers"] = like(TINY["dinov2"], num_register_tokens=2)
# relative position bias tables in every block, absolute positions too, the class token pooled after the final norm
TINY["beit"] = like(tiny.VIT, use_relative_position_bias=True, use_absolute_position_embeddings=True,
                    use_mean_pooling=False, vocab_size=11)
# relative position bias tables in every block, absolute positions too, the class token pooled after the final norm
TINY["data2vec-vision"] = TINY["beit"]
