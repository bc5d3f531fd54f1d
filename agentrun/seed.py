"""Figures of the seed deployment (the vLLM report this product grew from), used as defaults.

A leaf module on purpose: the CLI shows these as option defaults before it imports the
parts that use them.
"""

GPU_KV_TOKENS = 285_336  # the seed's vLLM GPU KV cache (tokens): the simulated prefix cache's default size
