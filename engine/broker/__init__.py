"""The broker node: its partitions, replica fetchers, request handlers and group coordinator."""
