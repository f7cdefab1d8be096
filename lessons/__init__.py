"""Lessons that follow the study notes: one folder per lesson (scenario, prose, quiz), same files in each."""
