"""The GPU emulator (see emulator.py)."""

from .emulator import Buf, EmulationError, Emulated, Emulator, run

__all__ = ["EmulationError", "run", "Emulator", "Emulated", "Buf"]
