"""A measured profile and its data file: :mod:`.profile` (the counts, per
function, with the CFG they belong to), :mod:`.measurement` (a whole data file's
contents in memory: runs and profiles), :mod:`.modules` (what a data file keeps once
per source, compressed: the contracts of its modules and their sources),
:mod:`.store` (the SQLite file, its
combining, locking and faults) and :mod:`.files` (the names of the files written
beside a data file, and the finding of them). Standard library only."""
