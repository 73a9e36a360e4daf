"""The campaign: the loop over cases, the minimiser pool and each finding's pipeline (minimise,
localise, render, confirm), and signal feedback.
"""
