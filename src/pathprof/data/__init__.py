"""A measured profile and its data file: :mod:`.profile` (the counts, per
function, with the CFG they belong to) and :mod:`.store` (the SQLite file, its
combining, locking and faults). Standard library only."""
