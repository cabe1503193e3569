"""LLaMA-style decoders (Llama, Mistral, Qwen2, Qwen3): pre-RMSNorm, rotary (rotate-half), GQA, gated SiLU FFN.

Optional biases (Qwen2's q/k/v, Llama's attention_bias and mlp_bias) are covered by the bias rules.

Qwen3 adds an RMSNorm over each head's dims on queries and keys, before the rotation, sharing
``rms_norm_eps`` with the hidden norms. Heads growth leaves it as it is. Under head_dim growth the
queries carry √(head_dim'/head_dim) in their aligned rotary slots and zeros elsewhere, so their mean
square over head_dim' is the small one's: the normalised query keeps that factor, which is the score
correction, and keys are plain copies; the norm weights are copied along the head layout and eps stays.
"""

from hfgrow.policy import NormsWithoutWeights, RotaryHeadDim
from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, TensorRule, block_spaces, drop, embedding, keep, linear, norm, writes

LAYER = "layers.*"
HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")

RECIPE = Recipe(
    name="llama",
    model_types=("llama",),
    classes=tuple(f"Llama{h}" for h in HEADS),
    prefix=("model", "transformer"),  # ForQuestionAnswering keeps the base model under `transformer`
    constraints=(RotaryHeadDim(),),
    norm="rms",
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", head_dim="head_dim", eps=("rms_norm_eps",)),
    spaces={
        **block_spaces(rope="half", grouped=True),  # the FFN space feeds SiLU (gate) and the product (up)
        "final": Space("hidden", Kind.TIED_OUTPUT),  # the final norm → LM head, tied or not
    },
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(
        *embedding("embed_tokens", "hidden"),
        *norm(f"{LAYER}.input_layernorm", "hidden", bias=False),
        *linear(f"{LAYER}.self_attn.q_proj", "q", "hidden"),
        *linear(f"{LAYER}.self_attn.k_proj", "k", "hidden"),
        *linear(f"{LAYER}.self_attn.v_proj", "v", "hidden"),
        *linear(f"{LAYER}.self_attn.o_proj", "hidden", "o"),
        *drop(f"{LAYER}.self_attn.rotary_emb.inv_freq"),  # saved by old transformers; sized by head_dim, rebuilt
        *norm(f"{LAYER}.post_attention_layernorm", "hidden", bias=False),
        *linear(f"{LAYER}.mlp.gate_proj", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.up_proj", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.down_proj", "hidden", "ffn"),
        *norm("norm", "final", input="hidden", bias=False),
    ),
    heads=(
        *linear("lm_head", None, "final", bias=False),
        *linear("score", None, "final"),
        *linear("qa_outputs", None, "final"),
    ),
)


def sinks(names: str = "sinks") -> tuple[TensorRule, ...]:
    """Attention sinks: one learned logit per query head beside the softmax's scores (space ``per_head``, see PER_HEAD):
    copied with its head, whose scores are the small head's."""
    return (TensorRule(f"{LAYER}.self_attn.({names})", (writes("per_head"),)),)


PER_HEAD = {"per_head": Space("heads", Kind.ACTIVATION)}  # a value per query head, as the heads are copied

MISTRAL = RECIPE.extend(name="mistral", model_types=("mistral",), classes=tuple(f"Mistral{h}" for h in HEADS))
QWEN2 = RECIPE.extend(name="qwen2", model_types=("qwen2",), classes=tuple(f"Qwen2{h}" for h in HEADS))
SMOLLM3 = RECIPE.extend(name="smollm3", model_types=("smollm3",), classes=tuple(f"SmolLM3{h}" for h in HEADS))  # NoPE layers
QWEN3 = RECIPE.extend(
    name="qwen3", model_types=("qwen3",), classes=tuple(f"Qwen3{h}" for h in HEADS),
    spaces={**RECIPE.spaces, "head": Space("head_dim", Kind.ACTIVATION, rope="half")},  # one head's dims, as q and k lay them out
    body=(*norm(f"{LAYER}.self_attn.q_norm", "head", bias=False), *norm(f"{LAYER}.self_attn.k_norm", "head", bias=False)),
)

# Qwen3-Omni's code predictor: Qwen3's blocks over input embeddings of the hidden width alone (token ids refused by its
# forward), one codec embedding and one LM head per code group but the first, the head picked by the sequence's length
QWEN3_OMNI_MOE_TALKER_CODE_PREDICTOR = QWEN3.extend(
    name="qwen3_omni_moe_talker_code_predictor", model_types=("qwen3_omni_moe_talker_code_predictor",),
    classes=("Qwen3OmniMoeTalkerCodePredictorModel", "Qwen3OmniMoeTalkerCodePredictorModelForConditionalGeneration"),
    embeds_input="hidden", body=embedding("codec_embedding.*", "hidden"), heads=linear("lm_head.*", None, "final", bias=False),
)

# Families with Llama's layout and semantics, each measured exact in every class (tests/test_families.py) rather
# than assumed: the differences they have (ReLU² MLP without a gate, sliding-window layers, YaRN by default, an
# encoder's bidirectional attention) change no tensor's growth.
ARCEE = RECIPE.extend(name="arcee", model_types=("arcee",), classes=tuple(f"Arcee{h}" for h in HEADS))  # up/down MLP, no gate
CWM = RECIPE.extend(name="cwm", model_types=("cwm",), classes=("CwmModel", "CwmForCausalLM"))  # sliding-window layers
MINISTRAL = RECIPE.extend(name="ministral", model_types=("ministral",), classes=tuple(f"Ministral{h}" for h in HEADS))
MINISTRAL3 = RECIPE.extend(name="ministral3", model_types=("ministral3",), classes=tuple(f"Ministral3{h}" for h in HEADS))
EUROBERT = RECIPE.extend(  # an encoder: pooled (mean, first or last token) → dense → act → classifier
    name="eurobert", model_types=("eurobert",),
    classes=("EuroBertModel", "EuroBertForMaskedLM", "EuroBertForSequenceClassification", "EuroBertForTokenClassification"),
    spaces={**RECIPE.spaces, "pooled": Space("hidden", Kind.ACTIVATION)},
    heads=(*linear("dense", "pooled", "final"), *linear("classifier", None, "pooled")),
    class_heads={"EuroBertForTokenClassification": linear("classifier", None, "final")},
)
# rotary on interleaved pairs (2i, 2i + 1), as RoFormer's: measured, under head_dim growth the half layout fails
INTERLEAVED = {**RECIPE.spaces, **block_spaces(rope="interleaved", grouped=True)}
ERNIE4_5 = RECIPE.extend(name="ernie4_5", model_types=("ernie4_5",), classes=("Ernie4_5Model", "Ernie4_5ForCausalLM"), spaces=INTERLEAVED)
HELIUM = RECIPE.extend(name="helium", model_types=("helium",), classes=tuple(f"Helium{h}" for h in HEADS[:4]), spaces=INTERLEAVED)
APERTUS = QWEN3.extend(  # Qwen3's attention; pre-norms under other names; an up/down MLP through xIELU, whose
    # learned scalars (and constant buffers) are elementwise, whatever the width
    name="apertus", model_types=("apertus",), classes=("ApertusModel", "ApertusForCausalLM", "ApertusForTokenClassification"),
    body=(*norm(f"{LAYER}.attention_layernorm", "hidden", bias=False), *norm(f"{LAYER}.feedforward_layernorm", "hidden", bias=False),
          *keep(f"{LAYER}.mlp.act_fn.alpha_(p|n)"), *keep(f"{LAYER}.mlp.act_fn.(beta|eps)", ndim=0)),
)
# Qwen2-VL's and Qwen2.5-VL's text models: Qwen2's blocks with multimodal rotary sections (mrope_section, scaled with
# head_dim); base models only
QWEN2_VL_TEXT = RECIPE.extend(name="qwen2_vl_text", model_types=("qwen2_vl_text",), classes=("Qwen2VLTextModel",))
QWEN2_5_VL_TEXT = RECIPE.extend(name="qwen2_5_vl_text", model_types=("qwen2_5_vl_text",), classes=("Qwen2_5_VLTextModel",))
# the same under other names: Qwen2.5-Omni's thinker text model and PaddleOCR-VL's (ERNIE 4.5's layout with Qwen2-VL's
# rotate-half multimodal sections; optional biases on every attention projection, o_proj's included)
QWEN2_5_OMNI_TEXT = RECIPE.extend(name="qwen2_5_omni_text", model_types=("qwen2_5_omni_text",), classes=("Qwen2_5OmniThinkerTextModel",))
PADDLEOCR_VL_TEXT = RECIPE.extend(name="paddleocr_vl_text", model_types=("paddleocr_vl_text",), classes=("PaddleOCRTextModel",))
# configurations of their own that transformers runs with Llama's classes (auto-mapped to LlamaModel / LlamaForCausalLM)
INTERNLM3 = RECIPE.extend(name="internlm3", model_types=("internlm3",), classes=("LlamaModel", "LlamaForCausalLM"))
IQUESTCODER = RECIPE.extend(name="iquestcoder", model_types=("iquestcoder",), classes=("LlamaModel", "LlamaForCausalLM"))
SEED_OSS = RECIPE.extend(name="seed_oss", model_types=("seed_oss",), classes=tuple(f"SeedOss{h}" for h in HEADS))
ULTRABERT = RECIPE.extend(  # an encoder; its MLM head puts an activation between the last projection and the tied decoder,
    # which the tied output's 1/k copies cannot pass: UltrabertForMaskedLM is not supported
    name="ultrabert", model_types=("ultrabert",), prefix=("model", "ultrabert"),
    classes=("UltrabertModel", "UltrabertForSequenceClassification", "UltrabertForTokenClassification", "UltrabertForQuestionAnswering"),
    heads=(*linear("classifier", None, "final"), *linear("qa_outputs", None, "final")),
)
OLMO = RECIPE.extend(  # OLMo (1): LayerNorms without weights, eps 1e-5 fixed in code
    name="olmo", model_types=("olmo",), classes=("OlmoModel", "OlmoForCausalLM"), norm="layer",
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", kv_heads="num_key_value_heads", eps=()),
    # the final norm has no weight to carry a tied output's 1/k: the LM head reads plain copies, so it must be untied;
    # q, k and v clamped at clip_qkv would see head_dim growth's score correction: not supported
    spaces={**RECIPE.spaces, "final": Space("hidden", Kind.RESIDUAL)},
    requires={"tie_word_embeddings": False, "clip_qkv": None},
    # no γ to carry what extra hidden units change in the statistics: the copies carry 1/√fill
    constraints=(NormsWithoutWeights(), *RECIPE.constraints),
)
# NanoChat: RMSNorms without weights everywhere (one of them also before the first block, and per head on q and k), a
# ReLU² MLP (fc1 / fc2), an untied LM head: the residual copies always carry 1/√fill, so no norm needs a weight
NANOCHAT = RECIPE.extend(
    name="nanochat", model_types=("nanochat",), classes=("NanoChatModel", "NanoChatForCausalLM"),
    spaces={**RECIPE.spaces, "final": Space("hidden", Kind.RESIDUAL)}, requires={"tie_word_embeddings": False},
    constraints=(NormsWithoutWeights(), *RECIPE.constraints),
    body=(*linear(f"{LAYER}.mlp.fc1", "ffn", "hidden", bias=False), *linear(f"{LAYER}.mlp.fc2", "hidden", "ffn", bias=False)),
)
