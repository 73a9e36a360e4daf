"""The bottom layer every stage may import: exit codes, the harness's error classes, the symptom
table, typed worker messages, backend resolution and the frozen campaign config.
"""
