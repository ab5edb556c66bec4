"""A tiny calculator: the nib demo's project."""


def add(a, b):
    return a - b


def mean(values):
    return sum(values) / len(values) + 1
