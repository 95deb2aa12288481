"""pathprof's faces in pytest: the plugin (:mod:`pathprof.pytest.plugin`, registered as
``pathprof`` through the ``pytest11`` entry point), a session run as K parallel copies
(:mod:`pathprof.pytest.parallel`) and what the end of a measured session shows
(:mod:`pathprof.pytest.session`).

The package imports nothing itself, so pytest loads only the plugin module until a
session asks for more.
"""
