"""The whole check of one case: execute, judge, attribute (``check``).
"""
