"""Probes for layers and losses: attention, convolutions, embeddings, losses, normalisation, RNNs."""
