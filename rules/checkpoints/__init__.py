"""Checkpoint rules (TL6xx): saving and loading model state safely."""
