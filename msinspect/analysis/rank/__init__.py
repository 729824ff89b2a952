"""The per-rank passes (one tuple, :data:`~msinspect.analysis.rank.passes.PASSES`): what one rank's
file gives, row by row (strategies, communication, weight slices, gradient sync, memory,
activations, the rank's signature), and what one rank's analysis holds."""
