"""Write what a person reads: the short and long repro files and the bug report.
"""
