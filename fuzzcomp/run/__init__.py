"""Run one case in a worker: seeded inputs (``runtime``), the eager, fp64 and compiled passes
(``execute``), the call extras of the reach capabilities, the compile-count bound, the eager
kernel audit and the compiler signals a case exercised.
"""
