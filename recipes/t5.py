"""T5 and mT5 / T5 v1.1: pre-RMSNorm encoder-decoder, no attention scaling, per-head relative bias.

The decoder output is multiplied by d_model^-½ before the LM head when the installed transformers says
so (``scale_decoder_outputs``: original T5 yes, T5 v1.1 no; mT5 never); the ``final`` space absorbs it.
"""

from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, block_spaces, embedding, linear, norm
from . import tiny
from .tiny import like

BLOCK = "block.*.layer.*"
HEADS = ("Model", "ForConditionalGeneration", "EncoderModel", "ForSequenceClassification", "ForTokenClassification",
         "ForQuestionAnswering")


def stack(name: str) -> tuple:
    """The rules of one T5 stack (``encoder`` or ``decoder``)."""
    b = f"{name}.{BLOCK}"
    rules = (*embedding(f"{name}.embed_tokens", "hidden"), *norm(f"{b}.layer_norm", "hidden", bias=False))
    for attn, kv_input in (("SelfAttention", "hidden"), ("EncDecAttention", "enc_final")):
        rules += (
            *linear(f"{b}.{attn}.q", "q", "hidden", bias=False),
            *linear(f"{b}.{attn}.k", "k", kv_input, bias=False),
            *linear(f"{b}.{attn}.v", "v", kv_input, bias=False),
            *linear(f"{b}.{attn}.o", "hidden", "o", bias=False),
        )
    return rules + (
        *embedding(f"{b}.SelfAttention.relative_attention_bias", "heads"),  # [buckets, heads]
        *embedding(f"{b}.EncDecAttention.relative_attention_bias", "heads"),  # in original checkpoints, unused
        *linear(f"{b}.DenseReluDense.wi", "ffn", "hidden", bias=False),
        *linear(f"{b}.DenseReluDense.wi_0", "ffn", "hidden", bias=False),  # gated: act(wi_0 x) * wi_1 x
        *linear(f"{b}.DenseReluDense.wi_1", "ffn", "hidden", bias=False),
        *linear(f"{b}.DenseReluDense.wo", "hidden", "ffn", bias=False),
        *norm(f"{name}.final_layer_norm", "final" if name == "decoder" else "enc_final", input="hidden", bias=False),
    )


RECIPE = Recipe(
    name="t5",
    model_types=("t5",),
    classes=tuple(f"T5{h}" for h in HEADS),
    prefix="transformer",
    attention_scaled=False,
    norm="rms",
    stacks=(("encoder.block", "num_layers", None), ("decoder.block", "num_decoder_layers", "num_layers")),
    config=ConfigFields(hidden="d_model", ffn="d_ff", heads="num_heads", head_dim="d_kv", eps=("layer_norm_epsilon",)),
    spaces={
        **block_spaces(),
        "heads": Space("heads", Kind.ACTIVATION),  # a per-head score bias: copies of whole heads
        "pooled": Space("hidden", Kind.ACTIVATION),  # sequence classification: dense → tanh → out_proj
        # the decoder's final norm feeds the LM head tied to `shared`, after a d_model^-½ where the
        # installed transformers applies one; the encoder's feeds only the cross-attention k and v
        "final": Space("hidden", Kind.TIED_OUTPUT, rescaled_by="scale_decoder_outputs"),
        "enc_final": Space("hidden", Kind.RESIDUAL),
    },
    outputs={
        "hidden_states": "hidden",
        "last_hidden_state": "final",
        "encoder_hidden_states": "hidden",
        "encoder_last_hidden_state": "enc_final",
        "decoder_hidden_states": "hidden",
        "decoder_last_hidden_state": "final",
    },
    # encoder-only classes: their last hidden state is the encoder's final norm
    class_outputs={f"{t}{h}": {"last_hidden_state": "enc_final"} for t in ("T5", "MT5")
                   for h in ("EncoderModel", "ForTokenClassification")},
    body=(*embedding("shared", "hidden"), *stack("encoder"), *stack("decoder")),
    heads=(
        *linear("lm_head", None, "final", bias=False, rescaled=True),
        *linear("classification_head.dense", "pooled", "final"),
        *linear("classification_head.out_proj", None, "pooled"),
        *linear("classifier", None, "enc_final"),  # token classification: encoder only
        *linear("qa_outputs", None, "final"),
    ),
)

MT5 = RECIPE.extend(name="mt5", model_types=("mt5",), classes=tuple(f"MT5{h}" for h in HEADS))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["t5"] = tiny.T5
TINY["mt5"] = like(TINY["t5"], feed_forward_proj="gated-gelu")
