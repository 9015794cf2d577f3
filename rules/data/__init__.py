"""Data-loading rules (TL5xx): DataLoader argument combinations that raise at run time."""
