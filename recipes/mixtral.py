"""Mixtral: a LLaMA-style decoder whose MLP is a mixture of experts. Each expert is a gated FFN of the shared
intermediate size (grown like one); the router reads the hidden stream and is never split for symmetry, so
its logits, and the experts it picks, are the small model's. Stored as transformers saves it, one key per
expert (``block_sparse_moe.experts.N.w1/w2/w3``), which it merges into 3-D tensors on load."""

from hfgrow.recipe import linear

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
    ),
)
