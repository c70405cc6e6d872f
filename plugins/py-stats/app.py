"""Descriptive statistics for Wharf, as a component built by componentize-py.

`componentize-py -d wit -w stats componentize app` makes the class `WitWorld`
below the implementation of the `stats` world in wit/stats.wit: each method is
one exported WIT function. Raising `Err(message)` returns `err(message)` for a
`result<_, string>`, which Wharf shows the client as a tool error.
"""

import math

import wit_world
from componentize_py_types import Err
from wit_world import Summary


def _checked(values: list[float]) -> list[float]:
    """The values, sorted; an error for an empty list or one holding NaN."""
    if not values:
        raise Err("the list of values is empty")
    if any(math.isnan(v) for v in values):
        raise Err("the list of values holds NaN")
    return sorted(values)


def _percentile(ordered: list[float], p: float) -> float:
    rank = (len(ordered) - 1) * p / 100.0
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


class WitWorld(wit_world.WitWorld):
    def summarize(self, values: list[float]) -> Summary:
        ordered = _checked(values)
        count = len(ordered)
        mean = math.fsum(ordered) / count
        variance = math.fsum((v - mean) ** 2 for v in ordered) / count
        return Summary(
            count=count,
            min=ordered[0],
            max=ordered[-1],
            mean=mean,
            median=_percentile(ordered, 50.0),
            stddev=math.sqrt(variance),
        )

    def percentile(self, values: list[float], p: float) -> float:
        ordered = _checked(values)
        if not 0.0 <= p <= 100.0:
            raise Err(f"p must be between 0 and 100, not {p}")
        return _percentile(ordered, p)
