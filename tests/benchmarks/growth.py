"""Memory growth per hour from (minute, bytes) samples, with how sure the figure is.

RSS read once a minute moves up and down by a megabyte or more as the allocator takes pages and gives them back, so
a least-squares slope over half an hour carries an error of the same order as a 1 MB/hour target. Each soak
prints the slope with its standard error and a 95% interval, so a figure is read as "under the target" only when
the interval says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MB = 2**20


@dataclass(frozen=True)
class Growth:
    """A least-squares slope in bytes per hour, its standard error, and the samples it was fitted to."""

    per_hour: float
    stderr: float
    samples: int

    def interval(self) -> tuple[float, float]:
        """The 95% interval of the slope (Student's t for samples - 2 degrees of freedom)."""
        half = _t95(self.samples - 2) * self.stderr
        return self.per_hour - half, self.per_hour + half

    def describe(self) -> str:
        low, high = self.interval()
        return (
            f"{self.per_hour / MB:+.2f} MB/hour ± {self.stderr / MB:.2f} (standard error; 95%: "
            f"{low / MB:+.2f} to {high / MB:+.2f}) over {self.samples} samples"
        )


def growth(points: list[tuple[float, float]]) -> Growth:
    """The slope of (minute, bytes) points in bytes per hour; NaN figures for fewer than three points."""
    n = len(points)
    mx = sum(x for x, _ in points) / n if n else 0.0
    my = sum(y for _, y in points) / n if n else 0.0
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if n < 3 or not sxx:
        return Growth(float("nan"), float("nan"), n)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    residual = sum((y - my - slope * (x - mx)) ** 2 for x, y in points) / (n - 2)
    return Growth(slope * 60, math.sqrt(residual / sxx) * 60, n)


def _t95(df: int) -> float:
    """Student's t two-sided 95% quantile: tabled to 30 degrees of freedom, then the normal's 1.96 (4% low at most)."""
    table = (
        *(12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13),
        *(2.12, 2.11, 2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05, 2.05, 2.04),
    )
    if df < 1:
        return float("nan")
    return table[df - 1] if df <= len(table) else 1.96
