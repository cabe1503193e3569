"""BART and mBART: encoder-decoders with learned positions (offset by 2), an embedding LayerNorm, LayerNorms
whose eps is fixed in code, a √d_model embedding multiplier when ``scale_embedding`` is set, and an LM head
tied to the shared embedding (plus ``final_logits_bias``).

BART is post-norm: the last decoder block's final LayerNorm is what the tied LM head reads, so that norm
alone writes the tied-output space (its copies carry 1/k). mBART is pre-norm with a final LayerNorm per stack,
but its residual stream starts at the embedding LayerNorm: whole multiples only there too, depth is exact.
The encoder's and decoder's head counts must be equal (they are in every released checkpoint); their FFN sizes may
differ: both grow by the same factor (``--factor``, or an ``--intermediate-size`` that is a whole multiple of the
encoder's).
"""

import dataclasses

from hfgrow.policy import PostNorm, WholeMultiplesOnly
from hfgrow.recipe import STREAM_FROM_NORM, ConfigFields, Kind, Recipe, Space, block_spaces, embedding, keep, last, linear, norm
from . import tiny

HEADS = ("Model", "ForConditionalGeneration", "ForSequenceClassification", "ForQuestionAnswering", "ForCausalLM")


def attention(module: str, kv_input: str = "hidden") -> tuple:
    return (*linear(f"{module}.q_proj", "q", "hidden"), *linear(f"{module}.k_proj", "k", kv_input),
            *linear(f"{module}.v_proj", "v", kv_input), *linear(f"{module}.out_proj", "hidden", "o"))


def stack(name: str) -> tuple:
    """The rules of one stack (``encoder`` or ``decoder``), every block alike."""
    b = f"{name}.layers.*"
    rules = (
        *embedding(f"{name}.embed_tokens", "embedded"),  # tied to shared: stored only by some checkpoints
        *embedding(f"{name}.embed_positions", "hidden"),
        *norm(f"{name}.layernorm_embedding", "hidden"),
        *attention(f"{b}.self_attn"),
        *norm(f"{b}.self_attn_layer_norm", "hidden"),
        *linear(f"{b}.fc1", f"{name}_ffn", "hidden"),
        *linear(f"{b}.fc2", "hidden", f"{name}_ffn"),
        *norm(f"{b}.final_layer_norm", "hidden"),
    )
    if name == "decoder":
        rules += (*attention(f"{b}.encoder_attn"), *norm(f"{b}.encoder_attn_layer_norm", "hidden"))
    return rules


RECIPE = Recipe(
    name="bart",
    model_types=("bart",),
    classes=tuple(f"Bart{h}" for h in HEADS),
    prefix="model",
    constraints=(PostNorm(),),
    stacks=(("encoder.layers", "encoder_layers", None), ("decoder.layers", "decoder_layers", None)),
    config=ConfigFields(hidden="d_model", ffn="encoder_ffn_dim", heads="encoder_attention_heads", eps=(),
                        decoder_ffn="decoder_ffn_dim", twins={"decoder_attention_heads": "encoder_attention_heads"}),
    spaces={
        **block_spaces(),
        "encoder_ffn": Space("ffn", Kind.ACTIVATION),
        "decoder_ffn": Space("decoder_ffn", Kind.ACTIVATION),
        "embedded": Space("hidden", Kind.RESIDUAL, embed_scale="scale_embedding"),  # before × √d_model, when set
        "final": Space("hidden", Kind.TIED_OUTPUT, rescaled_by="scale_embedding"),  # what the tied LM head reads
        "pooled": Space("hidden", Kind.ACTIVATION),  # classification head: dense → tanh → out_proj
    },
    outputs={
        "last_hidden_state": "final", "hidden_states": "hidden",
        "encoder_last_hidden_state": "hidden", "encoder_hidden_states": "hidden",
        "decoder_last_hidden_state": "final", "decoder_hidden_states": "hidden",
    },
    body=(
        *embedding("shared", "embedded"),
        *stack("encoder"),
        *stack("decoder"),
        *last(norm("decoder.layers.*.final_layer_norm", "final", input="hidden")),
    ),
    heads=(
        *linear("lm_head", None, "final", bias=False),
        *keep("final_logits_bias", ndim=2),
        *linear("classification_head.dense", "pooled", "final"),
        *linear("classification_head.out_proj", None, "pooled"),
        *linear("qa_outputs", None, "final"),
    ),
)

MBART = dataclasses.replace(
    RECIPE,
    name="mbart",
    model_types=("mbart",),
    classes=tuple(f"MBart{h}" for h in HEADS),
    constraints=(WholeMultiplesOnly(STREAM_FROM_NORM),),
    body=(
        *embedding("shared", "embedded"),
        *stack("encoder"),
        *stack("decoder"),
        *norm("encoder.layer_norm", "hidden"),
        *norm("decoder.layer_norm", "final", input="hidden"),
    ),
)

# MVP: BART's layout and heads; its prompts (use_prompt: per-layer key/value prefixes from a prompt MLP) are not covered
MVP = dataclasses.replace(RECIPE, name="mvp", model_types=("mvp",), classes=tuple(f"Mvp{h}" for h in HEADS),
                          requires={**RECIPE.requires, "use_prompt": False})


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["bart"] = tiny.BART
TINY["mbart"] = TINY["bart"]
TINY["mvp"] = TINY["bart"]
