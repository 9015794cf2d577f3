"""Numerical-accuracy rules (TL8xx): formulas with a dedicated, more accurate torch function."""
