"""The programs are run as subprocesses by test_equivalence.py, never imported by pytest
(the project's --doctest-modules would otherwise import, i.e. run, each of them)."""

collect_ignore_glob = ["programs/*"]
