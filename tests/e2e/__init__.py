"""Browser tests: Playwright driving Debian's chromium against a real Daphne (marked e2e)."""
