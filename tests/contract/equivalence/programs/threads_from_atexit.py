# Risk 3: threads started from `atexit` handlers (after the main code and after the
# interpreter has joined the ordinary threads), running measured functions; the handler
# joins them and prints their results (or what stopped them from starting).
import atexit
import threading


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def worker(n, out):
    value = fib(n)
    if value % 2:
        out.append(("odd", n, value))
    else:
        out.append(("even", n, value))


def start_threads(count):
    out = []
    threads = []
    for i in range(count):
        try:
            t = threading.Thread(target=worker, args=(10 + i, out))
            t.start()
        except RuntimeError as exc:
            print("cannot start thread:", exc, flush=True)
            return
        threads.append(t)
    for t in threads:
        t.join()
    print("atexit threads:", sorted(out), flush=True)


def daemon_from_atexit():
    out = []
    t = threading.Thread(target=worker, args=(15, out), daemon=True)
    try:
        t.start()
    except RuntimeError as exc:
        print("cannot start daemon:", exc, flush=True)
        return
    t.join()
    print("atexit daemon:", out, flush=True)


atexit.register(daemon_from_atexit)
atexit.register(start_threads, 3)
print("main code:", fib(12))
