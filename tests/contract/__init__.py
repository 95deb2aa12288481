"""What pathprof guarantees to the measured program and to its data (docs/guarantees.md)."""

#: The function the programs of these tests run: work(30) is 300, and one call runs
#: 31 paths (the entry, 29 iterations, the end).
WORK = """
    def work(n):
        total = 0
        for i in range(n):
            if i % 3:
                total += i
        return total
"""
