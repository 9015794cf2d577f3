"""PyTorch facts built on the layers below: model modes, activations, optimizer parameters, device moves, shapes."""
