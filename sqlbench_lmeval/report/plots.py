"""PNG charts of a report, drawn with matplotlib's object API on the Agg renderer: the figure
helpers every section's charts use, and :class:`Charts`, which titles, names and saves a
report's PNGs (why no pyplot, and matplotlib imported late: docs/layout.md#report-sections)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlbench_lmeval.report.tables import Image

DPI = 110


@contextmanager
def plain_text() -> Iterator[None]:
    """Every text made inside is drawn as written: run names are data, and matplotlib would
    read one such as ``$\\frac$`` as TeX and fail (its mathtext). Figures are made and saved
    inside (a text's setting is taken when it is made)."""
    import matplotlib  # heavy: loaded only to draw

    with matplotlib.rc_context({"text.parse_math": False}):
        yield


def new_figure(width: float, height: float):
    """A matplotlib Figure bound to the Agg canvas."""
    from matplotlib.backends.backend_agg import (
        FigureCanvasAgg,
    )  # heavy: matplotlib, loaded only to draw
    from matplotlib.figure import Figure  # heavy: matplotlib, loaded only to draw

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def save(figure, path: Path) -> Path:
    # A tight box keeps labels that sit outside the axes (polar ticks, legends) in the image.
    figure.savefig(path, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    return path


def grouped_bars(axes, groups: Sequence[str], series: dict[str, Sequence[float]], errors=None):
    """Bars per group (x) and series (colour); ``errors[name]`` = (lower, upper) offsets."""
    count = max(len(series), 1)
    width = 0.8 / count
    for index, (name, values) in enumerate(series.items()):
        positions = [x - 0.4 + width * (index + 0.5) for x in range(len(groups))]
        heights = [0.0 if math.isnan(value) else value for value in values]
        yerr = None
        if errors is not None and name in errors:
            yerr = [[0.0 if math.isnan(e) else e for e in side] for side in errors[name]]
        axes.bar(positions, heights, width, label=name, yerr=yerr, capsize=3)
    axes.set_xticks(range(len(groups)), list(groups))
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    if len(series) > 1:
        axes.legend(fontsize="small")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "view"


@dataclass
class Charts:
    """Draws the PNGs of a report into ``folder``; views inside a group get tables only (the
    group's chart and its category rows already show them)."""

    folder: Path
    skip: frozenset[str]
    images: list[Path]

    def draw(self, kind: str, view: str, title: str, plot, *args) -> tuple[Image, ...]:
        """The figure ``plot(*args)`` draws, titled "<view>: <title>", into
        ``<kind>-<view>.png``; the image block that shows it (none for a view that is skipped)."""
        if view in self.skip:
            return ()
        with plain_text():
            figure = plot(*args)
            figure.axes[0].set_title(f"{view}: {title}")
            path = save(figure, self.folder / f"{kind}-{_slug(view)}.png")
        self.images.append(path)
        return (Image(path.name, f"{kind} for {view}"),)


__all__ = ["Charts", "grouped_bars", "new_figure", "plain_text", "save"]
