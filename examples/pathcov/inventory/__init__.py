"""A small stock-keeping library: the sample project for path coverage."""
