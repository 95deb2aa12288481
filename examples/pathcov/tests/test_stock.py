import pytest

from inventory.stock import OutOfStock, price, reorder_list, reserve


def test_reserve_takes_stock():
    levels = {"bolt": 10}
    assert reserve(levels, "bolt", 4) == 6


def test_reserve_refuses_more_than_there_is():
    with pytest.raises(OutOfStock):
        reserve({"bolt": 1}, "bolt", 2)


def test_reorder_rounds_up_to_whole_packs():
    assert reorder_list({"bolt": 3, "nut": 50}, minimum=10, pack_size=5) == {"bolt": 2}


def test_price_volume_and_member():
    assert price(100, 1.0, member=True) == 88.2


def test_price_plain():
    assert price(1, 2.5) == 2.5
