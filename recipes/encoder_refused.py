"""The text-encoder model types of the coverage sweep that hfgrow refuses, each with what blocks it (listed in REFUSED).

Two kinds of reason, said as such: a mathematical limit (no growth of the stored weights can be exact: FNet's Fourier
transform along the hidden axis, Reformer's rotations drawn at run time) and "not declared yet" (the algebra allows it,
but the recipe vocabulary lacks a space, layout or input the family needs, or the verification cannot run a class).
"""

NOT_YET = "not declared yet"

REFUSED = {
    "fnet": "FNet mixes tokens with a 2-D Fourier transform whose second axis is the hidden one: the transform of k copies "
            "of a vector is non-zero only at every k-th frequency, not k copies of its transform, so no growth of the "
            "hidden width is exact (a mathematical limit)",
    "reformer": "Reformer's LSH attention buckets queries and keys by random rotations drawn at each forward pass with "
                "shape [head size, hashes, buckets/2] (or from hash_seed): a wider head draws other rotations, so the "
                "buckets and outputs differ (a mathematical limit of its hashing), beside reversible two-stream blocks "
                "and axial position embeddings",
    "funnel": f"{NOT_YET}: Funnel's relative attention reads a sinusoid of d_model features computed at run time through "
              "r_kernel (the wider sinusoid holds the small one's frequencies at every k-th feature, so r_kernel would "
              "read those and zero the rest: a position space no recipe declares), beside its pooled blocks, "
              "token-type attention biases and the decoder's upsampling",
    "longformer": f"{NOT_YET}: LongformerForQuestionAnswering and LongformerForMultipleChoice set global attention from "
                  "exactly three sep_token_id separators per row, which the verification's inputs lack (they do not run), "
                  "so not every class can be proven exact (the global q/k/v projections themselves grow)",
    "luke": f"{NOT_YET}: LUKE's entity embeddings (entity_emb_size, projected to the hidden width) and entity-aware "
            "attention (word-to-entity, entity-to-word and entity-to-entity queries) take entity_ids and spans that "
            "the verification's text inputs lack, and its entity heads read entity_last_hidden_state",
    "xmod": f"{NOT_YET}: X-MOD's per-language adapters (a bottleneck of hidden_size // adapter_reduction_factor, which "
            "would grow by the same factor, chosen per row by lang_ids) are a space no recipe declares yet",
    "convbert": f"{NOT_YET}: ConvBERT's span-based dynamic convolution (a depthwise-separable convolution over the "
                "hidden width, per-head kernels generated from the query and a softmax over kernel positions, head_ratio "
                "halving the attention heads) and its embedding projection are layouts no recipe declares yet",
    "squeezebert": f"{NOT_YET}: SqueezeBERT's 1×1 convolutions are linear maps, but grouped (q/k/v and the FFN in "
                   "groups of contiguous channels): the grown channels of each group must stay in its block, a "
                   "per-group layout of the hidden space no recipe declares yet",
    "mobilebert": f"{NOT_YET}: MobileBERT's blocks run in an intra-block bottleneck (128 of 512 wide) with shared "
                  "key/query bottlenecks and 4 stacked FFNs, its embeddings concatenate 3 shifted copies (trigram "
                  "input), and its MLM head reads the first embedding_size hidden units through the tied embeddings "
                  "and the rest through a dense matrix (a prefix of the hidden vector, which copies do not keep)",
    "modernvbert": f"{NOT_YET}: ModernVBERT is a vision-language encoder (a ModernBERT text model fed a vision tower's "
                   "patches through a pixel-shuffle connector reading factor² copies of the vision width): no recipe "
                   "joins its towers yet",
    "ultravbert": f"{NOT_YET}: UltraVBERT is a vision-language encoder (an UltraBERT text model fed a vision tower's "
                  "patches through a pixel-shuffle connector reading factor² copies of the vision width): no recipe "
                  "joins its towers yet",
}
