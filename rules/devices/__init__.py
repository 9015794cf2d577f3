"""Device rules (TL3xx): tensors and modules on the wrong device, and layouts `.view` rejects."""
