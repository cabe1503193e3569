"""Hybrids of state-space mixers and attention (docs/design.md §Recurrent mixers): the Mamba-2 mixers are the table of
``recipes/mamba.py`` (whole factors where their width is expand × hidden: the gated RMSNorm over groups of the mixer's
channels), Zamba's Mamba-1 mixer in heads is at the end; the attention, MLPs and experts are Llama's, Mixtral's or
Granite's.

Nemotron-H: pre-RMSNorm blocks of one mixer each, its kind per block in ``layers_block_type`` (Mamba-2, attention
without positions, a ReLU² MLP without a gate, or experts of the same up/down layout with a sigmoid router, its score
correction bias and a shared expert); the depth is the list's length. The Mamba-2 mixer has a width of its own
(``mamba_num_heads`` × ``mamba_head_dim``): its heads grow by the hidden size's whole factor and are kept otherwise.

Granite-4 hybrid (granitemoehybrid): Granite-MoE-Shared's blocks (Granite's multipliers, experts and a shared gated MLP
after every mixer; dense without experts) whose mixer is attention (rotary or none) or a Mamba-2 mixer of expand × hidden
channels, by ``layer_types``.

Bamba: Jamba's block layout (input_layernorm, pre_ff_layernorm, a gated MLP under ``feed_forward``, final_layernorm)
with rotary attention (half of each head) in the blocks ``attn_layer_indices`` lists and a Mamba-2 mixer of expand ×
hidden channels in the others; a new block is listed where its original is.

Falcon-H1: Bamba's layout with attention and a Mamba-2 mixer side by side in every block (their outputs summed), the
mixer of a width of its own (``mamba_d_ssm``, else expand × hidden: written out) and its gated RMSNorm optional
(``mamba_rms_norm``; without it, y ⊙ SiLU(z)). Its µP multipliers (embedding, LM head, attention in and out, keys,
the MLP's gate and down, the mixer's in and out and one per part of in_proj, ``ssm_multipliers``, applied through a
buffer rebuilt at the grown sizes) are scalars that no width enters: they stay, and every growth keeps them exact.

Zamba 2: Mamba-2 blocks, some of them (``layers_block_type`` "hybrid") preceded by a shared transformer block whose
attention reads the stream and the embedding's output side by side (2 × hidden: head_dim is 2 × hidden / heads), with
LoRA adapters per hybrid block on q, k, v and the MLP's gate|up (their rank kept), and a linear layer of its own that
adds the block's output to the Mamba block's input. The shared blocks are reused in a cycle of ``num_mem_blocks`` by
every hybrid block, and their adapters are indexed by the hybrid block's rank: a new hybrid block would change the
hybrid blocks after it, so new blocks go only after Mamba blocks (copies of them, renumbering nothing a hybrid block
depends on).
"""

import dataclasses

from hfgrow.policy import AttentionWidthIs, NewBlocksOnlyAfter
from hfgrow.recipe import (ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, keep, linear, norm, reads,
                           writes)

from .granite import GRANITEMOESHARED
from .llama import LAYER as BLOCK, RECIPE as LLAMA
from .mamba import MIXER2_SPACES, WHOLE_GROUPS, mamba2
from .mixtral import EXPERT_SPACES
from .tiny import like

LAYER = "layers.*"
MIXER = f"{LAYER}.mixer"


def up_down_experts(module: str) -> tuple[TensorRule, ...]:
    """A sigmoid router with its score correction bias (a buffer, per expert: kept), experts of an up/down MLP without a
    gate (``expert`` space), stored one key per expert and merged into 3-D tensors in memory, and a shared expert."""
    return (
        *linear(f"{module}.gate", None, "hidden", bias=False, split=False),
        *keep(f"{module}.gate.e_score_correction_bias"),
        *linear(f"{module}.experts.*.up_proj", "expert", "hidden", bias=False),
        *linear(f"{module}.experts.*.down_proj", "hidden", "expert", bias=False),
        TensorRule(f"{module}.experts.up_proj", (None, writes("expert"), reads("hidden"))),
        TensorRule(f"{module}.experts.down_proj", (None, writes("hidden"), reads("expert"))),
        *linear(f"{module}.shared_experts.up_proj", "shared", "hidden"),
        *linear(f"{module}.shared_experts.down_proj", "hidden", "shared"),
    )


NEMOTRON_H = Recipe(
    name="nemotron_h",
    model_types=("nemotron_h",),
    classes=("NemotronHModel", "NemotronHForCausalLM"),
    prefix=("backbone", "model"),  # stored under backbone, renamed to model on load
    norm="rms",
    stacks=(("layers", "num_hidden_layers", "layers_block_type"),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", head_dim="head_dim", eps=("layer_norm_epsilon",),
                        expert_ffn="moe_intermediate_size", shared_ffn="moe_shared_expert_intermediate_size",
                        mixer_heads="mamba_num_heads", mixer_head_dim="mamba_head_dim", mixer_state=("n_groups", "ssm_state_size")),
    spaces={**block_spaces(grouped=True), "final": LLAMA.spaces["final"], **EXPERT_SPACES, **MIXER2_SPACES},
    outputs=LLAMA.outputs,
    # experts that read a latent of their own (moe_latent_size) would need rules that depend on the config
    requires={"moe_latent_size": None},
    body=(
        *embedding("embeddings", "hidden"),
        *norm(f"{LAYER}.norm", "hidden", bias=False),
        *mamba2(MIXER),
        *linear(f"{MIXER}.q_proj", "q", "hidden", bias=False),
        *linear(f"{MIXER}.k_proj", "k", "hidden", bias=False),
        *linear(f"{MIXER}.v_proj", "v", "hidden", bias=False),
        *linear(f"{MIXER}.o_proj", "hidden", "o", bias=False),
        *linear(f"{MIXER}.up_proj", "ffn", "hidden"),
        *linear(f"{MIXER}.down_proj", "hidden", "ffn"),
        *up_down_experts(MIXER),
        *norm("norm_f", "final", input="hidden", bias=False),
    ),
    heads=linear("lm_head", None, "final", bias=False),
)

GRANITEMOEHYBRID = GRANITEMOESHARED.extend(
    name="granitemoehybrid", model_types=("granitemoehybrid",), classes=("GraniteMoeHybridModel", "GraniteMoeHybridForCausalLM"),
    config=dataclasses.replace(GRANITEMOESHARED.config, mixer_expand="mamba_expand", mixer_heads="mamba_n_heads",
                               mixer_state=("mamba_n_groups", "mamba_d_state")),
    spaces={**GRANITEMOESHARED.spaces, **MIXER2_SPACES},
    body=mamba2(f"{LAYER}.mamba"),
    constraints=(WHOLE_GROUPS, *GRANITEMOESHARED.constraints),
)

BAMBA = LLAMA.extend(
    name="bamba", model_types=("bamba",), classes=("BambaModel", "BambaForCausalLM"), prefix="model",
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", head_dim="head_dim", eps=("rms_norm_eps",), mixer_expand="mamba_expand",
                        mixer_heads="mamba_n_heads", mixer_state=("mamba_n_groups", "mamba_d_state")),
    spaces={**LLAMA.spaces, **MIXER2_SPACES},
    body=(
        *norm(f"{BLOCK}.pre_ff_layernorm", "hidden", bias=False),
        *norm("final_layernorm", "final", input="hidden", bias=False),
        *(TensorRule(r.pattern.replace(".mlp.", ".feed_forward."), r.axes) for r in LLAMA.body if ".mlp." in r.pattern),
        *mamba2(f"{BLOCK}.mamba"),
    ),
    constraints=(WHOLE_GROUPS, *LLAMA.constraints),
)

FALCON_H1 = BAMBA.extend(
    name="falcon_h1", model_types=("falcon_h1",), classes=("FalconH1Model", "FalconH1ForCausalLM"),
    config=dataclasses.replace(BAMBA.config, mixer_expand=None, mixer_heads="mamba_n_heads", mixer_head_dim="mamba_d_head",
                               mixer_size="mamba_d_ssm"),
    constraints=LLAMA.constraints,  # the mixer is kept at a hidden size that is not a multiple
)

SHARED = f"{BLOCK}.shared_transformer"
STREAM_AND_EMBEDDING = Packed((reads("hidden"), reads("hidden")))  # [hidden states | the embedding's output]
BOTH = Packed((writes("hidden"), writes("hidden")))
GATE_UP = Packed((writes("ffn"), writes("ffn")))
SHARED_BLOCKS = ("Zamba 2's hybrid blocks reuse num_mem_blocks shared transformer blocks in a cycle and index their "
                 "adapters by the hybrid block's rank: a new hybrid block would shift both for the hybrid blocks after it")


def lora(module: str, out: Packed | str, inp: Packed | str) -> tuple[TensorRule, ...]:
    """A Zamba 2 adapter (per hybrid block, stored in its shared block: ``module.N.0``, ``module.N.1``) beside a
    projection from ``inp`` to ``out``: down to the adapter's rank (kept) and up again."""
    def axis(a: Packed | str, reading: bool):
        return a if isinstance(a, Packed) else reads(a) if reading else writes(a)
    return (TensorRule(f"{module}.*.0.weight", (writes("adapter"), axis(inp, True))),
            TensorRule(f"{module}.*.1.weight", (axis(out, False), reads("adapter"))))


ZAMBA2 = Recipe(
    name="zamba2", model_types=("zamba2",), classes=("Zamba2Model", "Zamba2ForCausalLM", "Zamba2ForSequenceClassification"),
    prefix="model", norm="rms", stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", kv_heads="num_key_value_heads",
                        head_dim="attention_head_dim", eps=("rms_norm_eps",), mixer_expand="mamba_expand",
                        mixer_heads="n_mamba_heads", mixer_state=("mamba_ngroups", "mamba_d_state"),
                        fixed={"adapter": "adapter_rank"},
                        derived=("attention_hidden_size", "kv_channels", "num_query_groups", "mamba_headdim", "hybrid_layer_ids")),
    spaces={**block_spaces(rope="half", grouped=True), "final": LLAMA.spaces["final"], **MIXER2_SPACES,
            "adapter": Space("adapter", Kind.ACTIVATION)},
    outputs=LLAMA.outputs,
    body=(
        *embedding("embed_tokens", "hidden"),
        *norm(f"{BLOCK}.input_layernorm", "hidden", bias=False),
        *mamba2(f"{BLOCK}.mamba"),
        *norm(f"{BLOCK}.mamba_decoder.input_layernorm", "hidden", bias=False),
        *mamba2(f"{BLOCK}.mamba_decoder.mamba"),
        *linear(f"{BLOCK}.linear", "hidden", "hidden", bias=False),
        TensorRule(f"{SHARED}.input_layernorm.weight", (BOTH,), norm_input="hidden"),
        *(TensorRule(f"{SHARED}.self_attn.{p}_proj.weight", (writes(p), STREAM_AND_EMBEDDING)) for p in "qkv"),
        *(r for p in "qkv" for r in lora(f"{SHARED}.self_attn.linear_{p}_adapter_list", p, STREAM_AND_EMBEDDING)),
        *linear(f"{SHARED}.self_attn.o_proj", "hidden", "o", bias=False),
        *norm(f"{SHARED}.pre_ff_layernorm", "hidden", bias=False),
        TensorRule(f"{SHARED}.feed_forward.gate_up_proj.weight", (GATE_UP, reads("hidden"))),
        TensorRule(f"{SHARED}.feed_forward.gate_up_proj.bias", (GATE_UP,)),
        *lora(f"{SHARED}.feed_forward.gate_up_proj_adapter_list", GATE_UP, "hidden"),
        *linear(f"{SHARED}.feed_forward.down_proj", "hidden", "ffn"),
        *norm("final_layernorm", "final", input="hidden", bias=False),
    ),
    heads=(*linear("lm_head", None, "final", bias=False), *linear("score", None, "final", bias=False)),
    constraints=(WHOLE_GROUPS, AttentionWidthIs(2, "Zamba 2's attention reads the stream and the embedding side by side: its "
                                                   "head_dim is 2 × hidden_size / num_attention_heads"),
                 NewBlocksOnlyAfter("layers_block_type", ("linear_attention",), SHARED_BLOCKS), *LLAMA.constraints),
)


def zamba_mixer(module: str) -> tuple[TensorRule, ...]:
    """Zamba's Mamba-1 mixer split into heads (``mixer_heads``), each with its own x_proj and dt_proj over its channels:
    the channels are copied as whole heads (``mixer``: Space "mixer_by_head"), so a copy of a head reads all of its
    source head's channels; in_proj interleaves x and z channel by channel ([x₀ z₀ x₁ z₁ …])."""
    x_z = Packed((writes("mixer"), writes("mixer")), per_head="mixer")
    return (
        TensorRule(f"{module}.in_proj.weight", (x_z, reads("hidden"))),
        TensorRule(f"{module}.in_proj.bias", (x_z,)),
        TensorRule(f"{module}.conv1d.weight", (writes("mixer"), None, None)),
        TensorRule(f"{module}.conv1d.bias", (writes("mixer"),)),
        *(TensorRule(f"{module}.{name}", (writes("mixer_heads"), None, None)) for name in ("x_proj_weight", "dt_proj_weight", "A_log")),
        *(TensorRule(f"{module}.{name}", (writes("mixer_heads"), None)) for name in ("dt_proj_bias", "D")),
        *linear(f"{module}.out_proj", "hidden", "mixer"),
    )


ZAMBA_SHARED = f"{BLOCK}.shared_transf"
# Zamba: Zamba 2's layout a generation earlier: Mamba-1 mixers in heads, one shared transformer block (tied across every
# hybrid block, no adapters) whose attention reads [stream | embedding output]; head_dim is stored (2 × hidden / heads by
# default) and the attention's input width recomputed from the hidden size. Whole heads of the mixer copied, so any
# hidden size whose mixer is a whole number of heads; a new block is the identity of its original's kind.
ZAMBA = Recipe(
    name="zamba", model_types=("zamba",), classes=("ZambaModel", "ZambaForCausalLM", "ZambaForSequenceClassification"),
    prefix="model", norm="rms", stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", kv_heads="num_key_value_heads",
                        head_dim="attention_head_dim", eps=("rms_norm_eps",), mixer_expand="mamba_expand",
                        mixer_heads="n_mamba_heads", derived=("attention_hidden_size",)),
    spaces={**block_spaces(grouped=True), "final": LLAMA.spaces["final"], "mixer": Space("mixer_by_head", Kind.ACTIVATION),
            "mixer_heads": Space("mixer_heads", Kind.ACTIVATION)},
    outputs=LLAMA.outputs,
    body=(
        *embedding("embed_tokens", "hidden"),
        *norm(f"{BLOCK}.input_layernorm", "hidden", bias=False),
        *zamba_mixer(f"{BLOCK}.mamba"),
        *norm(f"{BLOCK}.mamba_decoder.input_layernorm", "hidden", bias=False),
        *zamba_mixer(f"{BLOCK}.mamba_decoder.mamba"),
        *linear(f"{BLOCK}.linear", "hidden", "hidden", bias=False),
        TensorRule(f"{ZAMBA_SHARED}.input_layernorm.weight", (BOTH,), norm_input="hidden"),
        *(TensorRule(f"{ZAMBA_SHARED}.self_attn.{p}_proj.weight", (writes(p), STREAM_AND_EMBEDDING)) for p in "qkv"),
        *linear(f"{ZAMBA_SHARED}.self_attn.o_proj", "hidden", "o", bias=False),
        *norm(f"{ZAMBA_SHARED}.pre_ff_layernorm", "hidden", bias=False),
        *(r for p in ("gate", "up") for r in linear(f"{ZAMBA_SHARED}.feed_forward.{p}_proj", "ffn", "hidden", bias=False)),
        *linear(f"{ZAMBA_SHARED}.feed_forward.down_proj", "hidden", "ffn", bias=False),
        *norm("final_layernorm", "final", input="hidden", bias=False),
    ),
    heads=ZAMBA2.heads,
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# Mamba-2 hybrids: a Mamba-2 block of two groups of two heads (head_dim 8, d_state 5), attention, and MLP or experts
TINY["nemotron_h"] = {"vocab_size": 97, "hidden_size": 16,
                      "layers_block_type": ["linear_attention", "moe", "full_attention", "mlp"],
                      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4, "intermediate_size": 24,
                      "mamba_num_heads": 4, "mamba_head_dim": 8, "n_groups": 2, "ssm_state_size": 5, "conv_kernel": 3,
                      "chunk_size": 4, "layer_norm_epsilon": 0.05, "n_routed_experts": 4, "n_group": 2, "topk_group": 1,
                      "num_experts_per_tok": 2, "moe_intermediate_size": 12, "moe_shared_expert_intermediate_size": 20,
                      "use_bias": True, "use_conv_bias": True, "mlp_bias": True, "pad_token_id": 0, "bos_token_id": 1,
                      "eos_token_id": 2}
TINY["granitemoehybrid"] = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4, "rms_norm_eps": 0.05,
                            "max_position_embeddings": 64, "num_labels": 3, "pad_token_id": 0,
                            "tie_word_embeddings": False, "embedding_multiplier": 2.5, "residual_multiplier": 0.7,
                            "logits_scaling": 3.0, "attention_multiplier": 0.3, "num_local_experts": 3,
                            "num_experts_per_tok": 2, "shared_intermediate_size": 20, "mamba_n_heads": 4,
                            "mamba_d_head": 8, "mamba_n_groups": 2, "mamba_d_state": 5, "mamba_d_conv": 3,
                            "mamba_expand": 2, "mamba_chunk_size": 4, "mamba_proj_bias": True, "mamba_conv_bias": True,
                            "layer_types": ["linear_attention", "full_attention"], "position_embedding_type": "rope"}
TINY["bamba"] = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "rms_norm_eps": 0.05, "attn_layer_indices": [1],
                 "attention_bias": True, "mlp_bias": True, "mamba_n_heads": 4, "mamba_d_head": 8, "mamba_n_groups": 2,
                 "mamba_d_state": 5, "mamba_d_conv": 3, "mamba_expand": 2, "mamba_chunk_size": 4,
                 "mamba_proj_bias": True, "mamba_conv_bias": True, "pad_token_id": 0, "bos_token_id": 1,
                 "eos_token_id": 2}
# every µP multiplier away from 1 (ssm_multipliers: one per part of in_proj, z | x | B | C | dt)
TINY["falcon_h1"] = like(TINY["bamba"], attn_layer_indices=None, mamba_d_ssm=32, mamba_rms_norm=True,
                         mamba_norm_before_gate=False, projectors_bias=True, embedding_multiplier=2.5,
                         lm_head_multiplier=0.6, mlp_multipliers=[1.3, 0.7], key_multiplier=0.8,
                         attention_in_multiplier=1.2, attention_out_multiplier=0.9,
                         ssm_multipliers=[0.9, 1.1, 1.2, 0.8, 1.3], ssm_in_multiplier=1.1, ssm_out_multiplier=0.7)
# two shared blocks, each with its adapters, before the Mamba-2 mixers of blocks 1 and 3; rotary attention
TINY["zamba2"] = {"vocab_size": 97, "hidden_size": 16, "num_hidden_layers": 4,
                  "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"], "n_mamba_heads": 4, "mamba_expand": 2,
                  "mamba_ngroups": 2, "mamba_d_state": 5, "mamba_d_conv": 3, "chunk_size": 4, "num_attention_heads": 4,
                  "num_key_value_heads": 4, "intermediate_size": 24, "rms_norm_eps": 0.05, "num_mem_blocks": 2,
                  "use_shared_attention_adapter": True, "adapter_rank": 3, "use_mem_rope": True,
                  "add_bias_linear": True, "num_labels": 3, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
# Zamba: a Mamba block and two hybrid blocks sharing one transformer block; two mixer heads of 16 channels
TINY["zamba"] = {"vocab_size": 97, "hidden_size": 16, "num_hidden_layers": 3,
                 "layers_block_type": ["mamba", "hybrid", "hybrid"], "num_attention_heads": 4, "num_key_value_heads": 4,
                 "n_mamba_heads": 2, "mamba_expand": 2, "mamba_d_state": 5, "mamba_dt_rank": 3, "mamba_d_conv": 3,
                 "intermediate_size": 24, "rms_norm_eps": 0.05, "mamba_proj_bias": True, "num_labels": 3,
                 "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
