"""Mixtral: a LLaMA-style decoder whose MLP is a mixture of experts. Each expert is a gated FFN of the shared
intermediate size (grown like one); the router reads the hidden stream and is never split for symmetry, so
its logits, and the experts it picks, are the small model's. Stored as transformers saves it, one key per
expert (``block_sparse_moe.experts.N.w1/w2/w3``), which it merges on load into 3-D tensors
(``mlp.experts.gate_up_proj`` [experts, gate|up, hidden], ``mlp.experts.down_proj``): both layouts are
grown, the stored one in checkpoints and the loaded one in a model in memory."""

from hfgrow.recipe import Packed, TensorRule, linear, reads, writes

from .llama import LAYER, RECIPE as LLAMA

MOE = f"{LAYER}.block_sparse_moe"
HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")

RECIPE = LLAMA.extend(
    name="mixtral",
    model_types=("mixtral",),
    classes=tuple(f"Mixtral{h}" for h in HEADS),
    body=(
        *linear(f"{MOE}.gate", None, "hidden", bias=False, split=False),
        *linear(f"{MOE}.experts.*.w1", "ffn", "hidden", bias=False),
        *linear(f"{MOE}.experts.*.w3", "ffn", "hidden", bias=False),
        *linear(f"{MOE}.experts.*.w2", "hidden", "ffn", bias=False),
        *linear(f"{LAYER}.mlp.gate", None, "hidden", bias=False, split=False),
        TensorRule(f"{LAYER}.mlp.experts.gate_up_proj", (None, Packed((writes("ffn"), writes("ffn"))), reads("hidden"))),
        TensorRule(f"{LAYER}.mlp.experts.down_proj", (None, writes("hidden"), reads("ffn"))),
    ),
)
