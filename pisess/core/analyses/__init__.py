"""Analyses over sessions: validate, search, stats and pi 1.6's usage breakdown, du, secrets, export."""
