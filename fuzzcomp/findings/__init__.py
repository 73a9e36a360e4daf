"""A finding's identity (``triage``), its folder on disk (``store``), the known-bug corpus and the
recheck of a campaign's buckets under another torch.
"""
