"""One IR file as the analyses walk it: its view (nodes by line and index, MindSpore's names), the
one definition of a data edge and the walks past plumbing, which operator of one graph is
which of another, the per-node facts, and the selectors of a spec."""
