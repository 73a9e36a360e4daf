"""``fuzzcomp bench``: throughput of the worker loop, and the planted-fault campaigns it times.
"""
