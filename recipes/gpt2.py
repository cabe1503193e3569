"""GPT-2: pre-norm decoder with Conv1D layers ([in, out]) and q|k|v packed in c_attn; tied LM head."""

from hfgrow.policy import IndexDependent
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, block_spaces, conv1d, drop, embedding, linear, norm, writes

BLOCK = "h.*"

RECIPE = Recipe(
    name="gpt2",
    model_types=("gpt2",),
    classes=(
        "GPT2Model",
        "GPT2LMHeadModel",
        "GPT2ForSequenceClassification",
        "GPT2ForTokenClassification",
        "GPT2DoubleHeadsModel",
        "GPT2ForQuestionAnswering",
    ),
    # the multiple-choice summary must project to labels (it would otherwise write a hidden-sized output)
    requires={"summary_use_proj": True, "summary_proj_to_labels": True},
    prefix="transformer",
    attention_scaled="scale_attn_weights",
    stacks=(("h", "n_layer", None),),
    constraints=(IndexDependent("scale_attn_by_inverse_layer_idx"),),  # renumbering blocks would change their scores
    config=ConfigFields(hidden="n_embd", ffn="n_inner", ffn_default=4, heads="n_head", eps=("layer_norm_epsilon",)),
    spaces={
        **block_spaces(),
        "final": Space("hidden", Kind.TIED_OUTPUT),  # ln_f → LM head tied to wte (and the other heads)
    },
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(
        *embedding("wte", "hidden"),
        *embedding("wpe", "hidden"),
        *norm(f"{BLOCK}.ln_1", "hidden"),
        *conv1d(f"{BLOCK}.attn.c_attn", Packed((writes("q"), writes("k"), writes("v"))), "hidden"),
        *conv1d(f"{BLOCK}.attn.c_proj", "hidden", "o"),
        *drop(f"{BLOCK}.attn.bias"),  # the causal-mask buffers of old checkpoints (rebuilt on load)
        *drop(f"{BLOCK}.attn.masked_bias"),
        *norm(f"{BLOCK}.ln_2", "hidden"),
        *conv1d(f"{BLOCK}.mlp.c_fc", "ffn", "hidden"),
        *conv1d(f"{BLOCK}.mlp.c_proj", "hidden", "ffn"),
        *norm("ln_f", "final", input="hidden"),
    ),
    heads=(
        *linear("lm_head", None, "final", bias=False),
        *linear("score", None, "final"),
        *linear("classifier", None, "final"),
        *linear("multiple_choice_head.summary", None, "final"),
        *linear("qa_outputs", None, "final"),
    ),
)

# ImageGPT: GPT-2's decoder over colour-cluster tokens with RMS-style norms (no mean, no bias: ImageGPTLayerNorm); its
# LM head predicts vocab_size - 1 clusters, the classifier reads the mean of ln_f's outputs
IMAGEGPT = RECIPE.extend(
    name="imagegpt", model_types=("imagegpt",), norm="rms",
    classes=("ImageGPTModel", "ImageGPTForCausalImageModeling", "ImageGPTForImageClassification"),
    body=tuple(r for n in (f"{BLOCK}.ln_1", f"{BLOCK}.ln_2") for r in norm(n, "hidden", bias=False))
    + norm("ln_f", "final", input="hidden", bias=False),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["gpt2"] = {"vocab_size": 97, "n_embd": 16, "n_layer": 2, "n_head": 2, "n_positions": 32,
                "layer_norm_epsilon": 0.05, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0, "pad_token_id": 0,
                "num_labels": 3}
# ImageGPT: 96 colour clusters (and a start token), 16 pixels
TINY["imagegpt"] = {"n_embd": 16, "n_layer": 2, "n_head": 2, "vocab_size": 97, "n_positions": 16,
                    "layer_norm_epsilon": 0.05, "num_labels": 3}
