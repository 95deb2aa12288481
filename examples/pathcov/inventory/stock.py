"""Stock levels and reorders."""


class OutOfStock(Exception):
    pass


def reserve(levels, item, quantity):
    """Take quantity of item out of levels; raise OutOfStock if there is not enough."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    have = levels.get(item, 0)
    if have < quantity:
        raise OutOfStock(item)
    levels[item] = have - quantity
    return levels[item]


def reorder_list(levels, minimum, pack_size):
    """Items below minimum, with how many packs to order to get back above it."""
    orders = {}
    for item, have in sorted(levels.items()):
        if have >= minimum:
            continue
        short = minimum - have
        packs = short // pack_size
        if short % pack_size:
            packs += 1
        orders[item] = packs
    return orders


def price(quantity, unit_price, member=False, coupon=None):
    """Price of an order line: volume discount, member discount, then a coupon."""
    total = quantity * unit_price
    if quantity >= 100:
        total *= 0.9
    elif quantity >= 10:
        total *= 0.95
    if member:
        total *= 0.98
    if coupon is not None:
        total = max(0.0, total - coupon)
    return round(total, 2)
