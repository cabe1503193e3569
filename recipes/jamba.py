"""Jamba: Llama-style attention blocks and Mamba-1 blocks (``attn_layer_period``/``attn_layer_offset``), dense gated MLPs
or Mixtral-style experts of the intermediate size (``expert_layer_period``/``expert_layer_offset``), RMSNorms over dt, B
and C (sizes that are kept, sharing ``rms_norm_eps`` with the hidden norms).
"""

from hfgrow.policy import DepthRequires
from hfgrow.recipe import ConfigFields, TensorRule, block_spaces, linear, writes

from .llama import LAYER, RECIPE as LLAMA
from .mamba import MIXER_SPACES, mamba
from .mixtral import experts

MIXER = f"{LAYER}.mamba"
# a block's kind is i % period == offset: a new block (of its original's kind) would shift the kinds after it, and the
# tensors would no longer be the ones the grown config builds
PERIODIC = ("the blocks' kinds are periodic in their index (attention where i % attn_layer_period == attn_layer_offset, "
            "experts where i % expert_layer_period == expert_layer_offset): a new block would shift the kinds of those after it")


RECIPE = LLAMA.extend(
    name="jamba",
    model_types=("jamba",),
    classes=("JambaModel", "JambaForCausalLM", "JambaForSequenceClassification"),
    prefix="model",
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", eps=("rms_norm_eps",), mixer_expand="mamba_expand"),
    # attention without positions (no rotary): head_dim grows as plain copies
    spaces={**block_spaces(grouped=True), "final": LLAMA.spaces["final"], **MIXER_SPACES},
    body=(
        *(r for r in LLAMA.body if ".mlp." not in r.pattern and r.pattern.split(".")[0] != "norm"),
        TensorRule(f"{LAYER}.pre_ff_layernorm.weight", (writes("hidden"),), norm_input="hidden"),
        TensorRule("final_layernorm.weight", (writes("final"),), norm_input="hidden"),
        *mamba(MIXER, bias=True),
        # RMSNorms over dt (dt_rank) and B, C (d_state): sizes that are kept, with the hidden norms' eps
        *(TensorRule(f"{MIXER}.{n}_layernorm.weight", (None,), norm_input="kept") for n in ("dt", "b", "c")),
        *(TensorRule(r.pattern.replace(".mlp.", ".feed_forward."), r.axes) for r in LLAMA.body if ".mlp." in r.pattern),
        *(TensorRule(r.pattern.replace(".mlp.", ".feed_forward."), r.axes, split=r.split)
          for r in experts("ffn") if ".gate." not in r.pattern),
        *linear(f"{LAYER}.feed_forward.router", None, "hidden", bias=False, split=False),
    ),
    constraints=(DepthRequires("attn_layer_period", 1, PERIODIC, lossy_fallback=False),
                 DepthRequires("expert_layer_period", 1, PERIODIC, lossy_fallback=False)),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# hybrids of attention and Mamba mixers: three blocks (Mamba, attention, Mamba), experts in the middle one; d_state and
# dt_rank that differ from every grown size
TINY["jamba"] = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 3,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "rms_norm_eps": 0.05, "num_experts": 3,
                 "num_experts_per_tok": 2, "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": 2,
                 "attn_layer_offset": 1, "mamba_d_state": 5, "mamba_d_conv": 3, "mamba_expand": 2, "mamba_dt_rank": 3,
                 "use_mamba_kernels": False, "pad_token_id": 0, "num_labels": 3, "tie_word_embeddings": False}
