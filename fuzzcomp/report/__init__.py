"""Sum a campaign up: summary.json and its text and markdown, the HTML page, CI formats and signal
coverage.
"""
