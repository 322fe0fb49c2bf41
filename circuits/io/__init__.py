"""Input/output: TransformerLens and GPT-2 state dicts, weight files, Hugging Face models."""
