"""Distributed-training rules (TL4xx): DDP wrapping, process groups, samplers, wrapped checkpoints."""
