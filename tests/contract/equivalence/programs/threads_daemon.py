# Risk 3: daemon threads: one finishes its measured work and reports before the main code
# ends; one is blocked forever when the interpreter exits; one is still busy running
# measured code (silently) while the interpreter shuts down around it.
import threading

done = threading.Event()
never = threading.Event()
stats = {"busy_rounds": 0}


def score(word):
    total = 0
    for ch in word:
        if ch in "aeiou":
            total += 3
        elif ch.isdigit():
            total += int(ch)
        else:
            total += 1
    return total


def quick(words, out):
    for w in words:
        out.append((w, score(w)))
    done.set()


def blocked():
    score("blocked")
    never.wait()
    print("never printed")


def busy():
    words = ["alpha", "b3ta", "gamma", "d3lt4"]
    i = 0
    while True:
        score(words[i % 4])
        i += 1
        stats["busy_rounds"] = i


results = []
threading.Thread(target=quick, args=(["one", "tw0", "three"], results), daemon=True).start()
threading.Thread(target=blocked, daemon=True).start()
busy_thread = threading.Thread(target=busy, daemon=True)
busy_thread.start()
done.wait()
print("quick:", results)
while stats["busy_rounds"] < 1000:
    threading.Event().wait(0.001)
print("busy thread alive:", busy_thread.is_alive(), "daemon:", busy_thread.daemon)
print("main code ends")
