"""What the built-in probes share: reading the user's expression and its operands (operands, derived),
the layer that produced a tensor (producer) and bounded walks over what a frame can reach (reach)."""
