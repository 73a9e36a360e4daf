"""Shrink a finding while it keeps its bucket: IR passes, the minimiser loop, the meta-tensor type
check, and the source-level reducer for hand-edited repro files.
"""
