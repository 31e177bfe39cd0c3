"""Comparing results of one run against another (e.g. one process against two)."""


def numbers_within(a, b, tolerance: float) -> bool:
    """The same structure, the same non-numbers, and numbers within `tolerance`."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= tolerance
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(numbers_within(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(numbers_within(x, y, tolerance) for x, y in zip(a, b))
    return a == b
