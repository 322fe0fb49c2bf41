"""Kept for puzzle files that import from here: the OV-circuit target lives in circuits.targets.ov."""

from circuits.targets.ov import OVCircuit, copying_score, full_ov, raised

__all__ = ["OVCircuit", "copying_score", "full_ov", "raised"]
