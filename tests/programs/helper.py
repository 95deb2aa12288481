"""Imported by app.py: measured because it lies in the script's directory."""


def total(xs):
    s = 0
    for x in xs:
        if x % 2:
            s += x
        else:
            s -= 1
    return s


def explode():
    raise RuntimeError("boom")
