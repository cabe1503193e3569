"""Cohere (Command-R): a parallel block (x + attention(ln x) + mlp(ln x), one norm), a LayerNorm without bias,
rotary on interleaved pairs (2i, 2i + 1) as RoFormer's, a constant ``logit_scale`` (kept) and a tied LM head.
The optional q/k LayerNorms (``use_qk_norm``, 2-D weights [heads, head_dim]) are not supported yet."""

from hfgrow.recipe import ConfigFields, Kind, Space, block_spaces, norm

from .llama import LAYER, RECIPE as LLAMA

RECIPE = LLAMA.extend(
    name="cohere",
    model_types=("cohere",),
    classes=("CohereModel", "CohereForCausalLM"),
    prefix=("model",),
    norm="layer",
    requires={"use_qk_norm": False},
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", head_dim="head_dim", eps=("layer_norm_eps",)),
    spaces={
        **block_spaces(rope="interleaved", grouped=True),
        "final": Space("hidden", Kind.TIED_OUTPUT),
    },
    body=(
        *norm(f"{LAYER}.input_layernorm", "hidden", bias=False),
        *norm("norm", "final", input="hidden", bias=False),
    ),
)

COHERE2 = RECIPE.extend(name="cohere2", model_types=("cohere2",), classes=("Cohere2Model", "Cohere2ForCausalLM"))  # + sliding window
