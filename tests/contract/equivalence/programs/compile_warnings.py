# Risk 5: warnings as Python reports them for the main script: SyntaxWarnings issued
# while compiling it (an `is` comparison with a literal, an assert on a tuple, an invalid
# escape sequence on 3.12+, a `return` in `finally` on 3.14) and runtime warnings from
# its functions with stacklevel 1, 2 and 3, repeated in a loop (shown once per line).
import warnings


def literal_is(x):
    return x is 1000  # noqa: F632


def tuple_assert(x):
    assert (x, "always true")  # noqa: F631
    return x


def escape():
    return "\d"  # noqa: W605


def return_in_finally(x):
    try:
        if x:
            raise ValueError(x)
    finally:
        return "finally wins"  # noqa: B012


def warn_at(level, text):
    warnings.warn(text, UserWarning, stacklevel=level)


def middle(level, text):
    warn_at(level, text)


def caller():
    for i in range(3):
        for level in (1, 2, 3):
            middle(level, f"level {level}")
        if i == 1:
            warnings.warn("deprecated thing", DeprecationWarning, stacklevel=1)
            warnings.warn("future thing", FutureWarning, stacklevel=2)


print(literal_is(5), tuple_assert(1), escape(), return_in_finally(1))
caller()
print("done")
