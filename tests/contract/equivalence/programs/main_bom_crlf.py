# Risk 5: the script's bytes as Python reads them: a UTF-8 byte order mark, CRLF line
# endings, a form feed, backslash continuations, non-ASCII text and no newline at the
# end. Line numbers and source lines in tracebacks, linecache and inspect must match.
# ruff: noqa: I001, W292, W293
import inspect
import linecache
import traceback



def pick(n):
    total = n + \
        1
    if total > 3 and \
            n != 9:
        return "grande été ✓"
    raise KeyError(f"petit {total}")


print(pick(5))
try:
    pick(1)
except KeyError as e:
    print("".join(traceback.format_exception(e)), end="")
print(repr(inspect.getsource(pick)))
print(repr(linecache.getline(__file__, 16)))
print(pick.__code__.co_firstlineno)
pick(0)