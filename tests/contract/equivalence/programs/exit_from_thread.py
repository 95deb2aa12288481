# Risk 6: `raise SystemExit` / `sys.exit(...)` from threads (only that thread ends,
# silently; the process goes on and exits 0), and `_thread.exit()`; a thread's sys.exit
# through a finally clause; then the main thread finishes normally.
import _thread
import sys
import threading

log = []


def stop_with(kind, depth):
    if depth:
        try:
            return stop_with(kind, depth - 1)
        finally:
            log.append(f"{kind}: finally at {depth}")
    log.append(f"{kind}: stopping")
    if kind == "raise":
        raise SystemExit(5)
    if kind == "sys.exit":
        sys.exit("message from thread")
    if kind == "_thread.exit":
        _thread.exit()
    log.append("not reached")
    return None


for kind in ("raise", "sys.exit", "_thread.exit"):
    t = threading.Thread(target=stop_with, args=(kind, 2))
    t.start()
    t.join()
    log.append(f"{kind}: joined, alive={t.is_alive()}")
print("\n".join(log))
print("main continues and ends normally")
