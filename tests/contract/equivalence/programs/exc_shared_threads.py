# Risk 1 (threads): one exception object shared between threads and raised in each (one
# after the other, then concurrently), its traceback inspected; then an exception left
# uncaught in a thread (threading's default excepthook prints it, naming the thread).
import threading
import traceback

SHARED = ValueError("shared between threads")
results = {}


def thrower(depth):
    if depth:
        return thrower(depth - 1)
    raise SHARED


def worker(name, depth):
    try:
        thrower(depth)
    except ValueError as e:
        names = []
        tb = e.__traceback__
        while tb is not None:
            names.append(tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        results[name] = (e is SHARED, names)


for name, depth in (("first", 1), ("second", 2)):
    t = threading.Thread(target=worker, args=(name, depth), name=name)
    t.start()
    t.join()
    print(name, results[name])
print("".join(traceback.format_exception(SHARED)), end="")

barrier = threading.Barrier(3)
caught = []
lock = threading.Lock()


def concurrent(depth):
    barrier.wait()
    for _ in range(50):
        try:
            thrower(depth)
        except ValueError as e:
            with lock:
                caught.append(e is SHARED)


threads = [threading.Thread(target=concurrent, args=(d,)) for d in (0, 3, 5)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("concurrent", len(caught), all(caught))


def failing(n):
    if n > 1:
        return failing(n - 1)
    raise RuntimeError(f"uncaught in {threading.current_thread().name}")


t = threading.Thread(target=failing, args=(3,))
t.start()
t.join()
print("after failing thread:", t.name)
