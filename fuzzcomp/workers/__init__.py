"""Where cases run: the local worker process, the Ray actor, the engine that makes them, and the
verdicts for a worker that died or hung.
"""
