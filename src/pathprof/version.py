"""pathprof's version: a leaf module, so that whatever stamps a file or a report
with it imports nothing else of pathprof (and no import cycle goes through the
package's ``__init__``)."""

__version__ = "0.1.0"
