"""Prices orders: the hot, branchy code of the demo."""


class InvalidOrder(ValueError):
    pass


TAX = {"book": 0, "music": 20, "food": 5, "gift": 20}


def line_total(kind, cents):
    if kind not in TAX:
        raise InvalidOrder(kind)
    total = cents * 100
    if kind == "book" and cents > 50:
        total -= total // 10          # long books are 10% off
    return total + total * TAX[kind] // 100


def price(order):
    if not order["items"]:
        raise InvalidOrder("empty order")
    total = 0
    for kind, cents in order["items"]:
        total += line_total(kind, cents)
    if order["member"]:
        total -= total // 20
    coupon = order["coupon"]
    if coupon == "SAVE10":
        total -= min(total, 1000)
    elif coupon is not None:
        raise InvalidOrder(f"unknown coupon {coupon}")
    return total
