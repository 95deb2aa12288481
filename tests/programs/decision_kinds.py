def tail_if(x):
    if x:
        y = 1


def tail_for(xs):
    for x in xs:
        pass


def tail_while(n):
    while n:
        n -= 1


def back_if(items):
    total = 0
    for item in items:
        if item > 2:
            total += item
    return total


def tail_match(v):
    match v:
        case 1:
            w = 1
        case [a, b]:
            w = 2


def try_it(f):
    try:
        f()
    except ValueError:
        pass


def bad():
    raise ValueError


for v in (0, 1):
    tail_if(v)
tail_for([1, 2])
tail_for([])
tail_while(2)
back_if([1, 2, 3, 4])
for v in (1, [1, 2], "x"):
    tail_match(v)
try_it(bad)
try_it(int)
