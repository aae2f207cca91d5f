"""Probes for the state of the process: autograd graphs, checkpoints and state_dicts, data loading,
devices, distributed process groups, dtypes, memory, recursion."""
