"""Parallel profiling: K copies of one run, each profiling part of the program,
whose data files add up to the exact profile (P3, Afraz, Saha and Kanade 2015).

:mod:`.plan` decides which copy profiles which function, :mod:`.run` starts the
copies (on this machine or on a Dask cluster, :mod:`.executors`), checks that they
ran the same program, and merges their data. What a copy does inside the program
is :mod:`pathprof.measure.partial`.
"""
