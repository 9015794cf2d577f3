"""nn.Module definition rules (TL2xx): state that PyTorch cannot see."""
