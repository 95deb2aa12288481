"""Pure analyses of a measured profile: path coverage, line and branch coverage
derived from paths, diffs of two profiles, and edge counts predicted from paths.
Nothing here runs inside the measured program."""
