"""Submitted runs: reading them as logged (``logged``), verifying them (``verify``,
``verify_report``) and ranking them (``leaderboard``)."""
