"""Plain python against `pathprof run`: the measured program cannot tell."""
