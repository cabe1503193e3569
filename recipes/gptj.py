"""GPT-J: a parallel block (x + attention(ln₁ x) + mlp(ln₁ x), one LayerNorm with bias), q/k/v and the output
projection without biases, a GELU MLP with biases (``fc_in`` / ``fc_out``), an LM head with a bias, and rotary on the
first ``rotary_dim`` dims of each head in the interleaved layout (``rotate_every_two``: pairs of adjacent dims), its
sinusoid a buffer transformers rebuilds from ``rotary_dim`` (never stored).

``rotary_dim`` is a width of its own (not a fraction of head_dim): under head_dim growth it is rewritten k times
(config_rewrite), so the rotary part grows with the head as a partial rotary factor's would and every small frequency
lands on its aligned slot (docs/design.md §RoPE); heads growth keeps it.
"""

from hfgrow.policy import RotaryHeadDim
from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, block_spaces, drop, embedding, linear, norm

BLOCK = "h.*"

RECIPE = Recipe(
    name="gptj",
    model_types=("gptj",),
    classes=("GPTJModel", "GPTJForCausalLM", "GPTJForSequenceClassification", "GPTJForQuestionAnswering"),
    prefix="transformer",
    constraints=(RotaryHeadDim(),),
    norm="layer",
    stacks=(("h", "n_layer", None),),
    config=ConfigFields(hidden="n_embd", ffn="n_inner", ffn_default=4, heads="n_head", eps=("layer_norm_epsilon",)),
    spaces={**block_spaces(rope="interleaved"), "final": Space("hidden", Kind.TIED_OUTPUT)},
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(
        *embedding("wte", "hidden"),
        *norm(f"{BLOCK}.ln_1", "hidden"),
        *linear(f"{BLOCK}.attn.q_proj", "q", "hidden", bias=False),
        *linear(f"{BLOCK}.attn.k_proj", "k", "hidden", bias=False),
        *linear(f"{BLOCK}.attn.v_proj", "v", "hidden", bias=False),
        *linear(f"{BLOCK}.attn.out_proj", "hidden", "o", bias=False),
        *drop(f"{BLOCK}.attn.(bias|masked_bias|embed_positions)"),  # buffers of old checkpoints, rebuilt on load
        *linear(f"{BLOCK}.mlp.fc_in", "ffn", "hidden"),
        *linear(f"{BLOCK}.mlp.fc_out", "hidden", "ffn"),
        *norm("ln_f", "final", input="hidden"),
    ),
    heads=(
        *linear("lm_head", None, "final"),  # with its bias (vocab-sized: kept)
        *linear("score", None, "final", bias=False),
        *linear("qa_outputs", None, "final"),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# GPT-J: heads of 8, rotary on the first 4 dims of each (interleaved pairs); the FFN 4 × hidden (n_inner None)
TINY["gptj"] = {"vocab_size": 97, "n_embd": 16, "n_layer": 2, "n_head": 2, "rotary_dim": 4, "n_positions": 32,
                "layer_norm_epsilon": 0.05, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0, "pad_token_id": 0,
                "bos_token_id": 1, "eos_token_id": 2, "num_labels": 3}
