# Risk 3: non-daemon threads still working when the main script's code has ended (the
# interpreter waits for them at exit); they keep calling measured functions and print
# their results at the end, after everything the main code printed.
import threading


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2:
            n = 3 * n + 1
        else:
            n //= 2
        steps += 1
    return steps


def classify(values):
    out = {"even": 0, "odd": 0, "big": 0}
    for v in values:
        if v > 100:
            out["big"] += 1
        elif v % 2:
            out["odd"] += 1
        else:
            out["even"] += 1
    return out


def busy_while_main_runs(start):
    # Works until the main thread has finished the script's code (and at least 200 rounds).
    rounds = 0
    values = []
    while threading.main_thread().is_alive() or rounds < 200:
        values.append(collatz_steps(start + rounds % 50))
        rounds += 1
    busy_result.append(classify(values[:200]))


def waits_for_main(limit, other):
    # Returns once the main thread has finished running the script's code.
    threading.main_thread().join()
    steps = [collatz_steps(n) for n in range(1, limit)]
    other.join()
    print("busy thread:", busy_result, flush=True)
    print("after main:", sum(steps), classify(steps), flush=True)


busy_result = []
t2 = threading.Thread(target=busy_while_main_runs, args=(27,))
t1 = threading.Thread(target=waits_for_main, args=(400, t2))
t2.start()
t1.start()
print("main code:", collatz_steps(97), flush=True)
print("main code ends", flush=True)
