"""What the VLM-backed parts share: the OpenAI-compatible chat call and Qwen2.5-VL through transformers."""
