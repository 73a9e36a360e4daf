"""Attribute a finding: the backend ladder names its stage, the culprit op names a value
finding, the half-precision witness drops design differences. Each is handed ``check`` as its probe.
"""
