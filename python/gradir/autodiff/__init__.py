"""Reverse-mode automatic differentiation of rlx programs."""
