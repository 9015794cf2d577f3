"""Legacy-API rules (TL7xx): removed or deprecated torch/torchvision APIs and legacy idioms."""
