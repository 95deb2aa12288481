"""Renderers: each takes plain data and an output, and shows the data there.

The one renderer signature::

    render(data, out, **options) -> None | str

- ``data`` is what the renderer shows, already computed: a
  :class:`~pathprof.data.measurement.Measurement` (``paths_text``, ``paths_json``), a
  :class:`~pathprof.analysis.pathcoverage.PathCoverage` (``coverage_text``,
  ``coverage_json``, ``html``), a
  :class:`~pathprof.analysis.linecoverage.LineCoverage` (``lcov``, ``cobertura``), a
  :class:`~pathprof.analysis.pathdiff.ProfileDiff` (``diff_text``), event counts
  (``events_text``), the hottest subpaths (``subpaths_text``; their JSON document for
  ``subpaths_html``), a CFG read from JSON (``plan``, ``partition_plan``).
- ``out`` is a text stream -- or, for the text renderers, a rich console to print
  on -- except for the HTML renderers, whose output is a directory (created); they
  return the index file's path.
- ``options`` are the renderer's keywords (``top=``, ``show_missing=``...).

A renderer reads no file -- not the data file, the configuration, nor a source file
(:mod:`pathprof.api` reads them and hands the renderer what they hold:
``subpaths_html`` takes the lines of the files its document names as ``sources=``) --
and imports no other renderer, nor the store, the front end, the runtime, the
measurement or the faces (``tests/test_layout.py``).
What several renderers share and that renders nothing lives in
:mod:`.console`, :mod:`.terminal`, :mod:`.formatting` and :mod:`.htmlfiles`, or in
:mod:`pathprof.analysis`. The faces reach the renderers by name through
:func:`pathprof.api.render`. :mod:`.session` is not a renderer: it is the pytest
plugins' end of session, a face's part.
"""
