"""memoryd benchmarks: quality, speed and footprint. Never run as tests."""
