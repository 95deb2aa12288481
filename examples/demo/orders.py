"""pathprof's demo program: price a day of orders.

Run it under the profiler with `make demo`, or by hand:

    pathprof run examples/demo/orders.py && pathprof report
"""

import random

from pricing import InvalidOrder, price


def make_orders(count, seed=7):
    rng = random.Random(seed)
    kinds = ["book", "book", "book", "music", "food", "gift"]
    orders = []
    for _ in range(count):
        items = [(rng.choice(kinds), rng.randint(1, 60)) for _ in range(rng.randint(0, 4))]
        orders.append({"items": items, "member": rng.random() < 0.3,
                       "coupon": rng.choice([None, None, None, "SAVE10", "BOGUS"])})
    return orders


def run(count):
    revenue, rejected = 0, 0
    for order in make_orders(count):
        try:
            revenue += price(order)
        except InvalidOrder:
            rejected += 1
    return revenue, rejected


if __name__ == "__main__":
    revenue, rejected = run(5000)
    print(f"revenue {revenue / 100:.2f}, {rejected} orders rejected")
