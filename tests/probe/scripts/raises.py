import torch


def load_batch(step):
    if step == 2:
        raise ValueError(f"corrupt batch {step}")
    return torch.randn(4, 4)


for step in range(5):
    batch = load_batch(step)
