"""Measuring a run, inside the program's process: the profiler, the import hook
that instruments modules as they are imported (and in place, those imported
before), running ``__main__`` as Python would, and measuring child processes.
Standard library only."""
