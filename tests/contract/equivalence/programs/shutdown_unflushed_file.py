# Risk 2: a file object in module globals holding unflushed output (a buffered text file
# on a duplicate of fd 1): Python flushes it when it finalizes the object at exit, so the
# text appears after everything else the program printed.
import os


def header(n):
    lines = []
    for i in range(n):
        if i % 2:
            lines.append(f"odd line {i}")
        else:
            lines.append(f"even line {i}")
    return "\n".join(lines) + "\n"


late_out = open(os.dup(1), "w", buffering=65536)  # noqa: SIM115
late_out.write(header(3))
late_out.write("written to a duplicate of fd 1, flushed only when finalized at exit\n")
print("main done", flush=True)
