"""The leaderboard's forest plot: one row per ranked model, its EX as a point and its 95%
bootstrap interval as a line, best first, drawn with matplotlib as an SVG ``data:`` URI that the
page embeds (nothing to fetch). Names from runs are drawn as plain text (``plots.plain_text``),
and the SVG is the same for the same data (fixed ids, no date)."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence

from sqlbench_lmeval.report.plots import new_figure, plain_text
from sqlbench_lmeval.scoring.metrics import EX
from sqlbench_lmeval.submission.verify import VERIFIED, WITH_FINDINGS

#: Marker per ranked verdict: a run with findings stands out from a clean one.
STYLES = {
    VERIFIED: {"marker": "o", "color": "#176617", "markerfacecolor": "#176617"},
    WITH_FINDINGS: {"marker": "D", "color": "#b36b00", "markerfacecolor": "white"},
}
#: Longer names are cut in the plot (the table beside it shows them whole).
NAME_CHARS = 40


def forest_plot(models: Sequence[Mapping], title: str, category: str | None = None) -> str:
    """The plot of ``models`` (the leaderboard's ranked models of one task, in rank order) on
    the whole task, or on ``category`` (its EX and interval there), as a ``data:`` URI."""
    with plain_text():
        return svg_uri(forest_figure(models, title, category))


def svg_uri(figure) -> str:
    """``figure`` as an SVG ``data:`` URI, the same bytes for the same figure."""
    import matplotlib  # heavy: loaded only to draw

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "sqlbench-lmeval", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    encoded = base64.b64encode(buffer.getvalue().encode("utf-8")).decode("ascii")
    return f"data:image/svg+xml;base64,{encoded}"


def forest_figure(models: Sequence[Mapping], title: str, category: str | None = None):
    """The matplotlib figure of :func:`forest_plot`: one row per model from the best down (on
    a category: by the rank there), its EX a marker, its interval a line, its rank and name
    the tick label."""
    if category:
        models = sorted(
            models,
            key=lambda m: (
                m["by_category"].get(category, {}).get("rank") is None,
                m["by_category"].get(category, {}).get("rank") or 0,
            ),
        )  # stable: ties keep the whole task's order
    rows = []
    for model in models:
        values = model["by_category"].get(category, {}) if category else model
        rows.append((model, values.get(EX), values.get(f"{EX}_low"), values.get(f"{EX}_high")))
    figure = new_figure(8.0, 1.1 + 0.32 * max(len(rows), 1))
    axes = figure.add_subplot()
    handles = {}  # verdict -> its marker, for the legend
    for position, (model, mean, low, high) in enumerate(rows):
        if mean is None:
            continue
        style = STYLES.get(model["verdict"], STYLES[VERIFIED])
        axes.plot([low, high], [position, position], color=style["color"], linewidth=1.5)
        (marker,) = axes.plot([mean], [position], linestyle="none", markersize=6, **style)
        handles.setdefault(model["verdict"], marker)
        # The numbers beside the row, as a forest plot's table has them (group letters: the
        # whole task's only).
        letters = f"  {model['groups']}" if not category and model.get("groups") else ""
        axes.annotate(
            f"{mean:.3f} [{low:.3f}, {high:.3f}]{letters}",
            (1.0, position),
            xycoords=axes.get_yaxis_transform(),
            xytext=(8, 0),
            textcoords="offset points",
            va="center",
            fontsize="small",
            annotation_clip=False,
        )
    labels = [f"{_rank(model, category)}  {_name(model)}" for model, *_ in rows]
    axes.set_yticks(range(len(rows)), labels, parse_math=False)  # even outside plain_text
    axes.set_ylim(len(rows) - 0.5, -0.5)  # best at the top
    axes.set_xlim(-0.02, 1.02)
    axes.set_xlabel(
        f"EX{' on ' + category if category else ''} (95% bootstrap interval)", parse_math=False
    )
    axes.set_title(title, parse_math=False, fontsize="medium")
    axes.grid(axis="x", alpha=0.3)
    axes.set_axisbelow(True)
    if len(handles) > 1:  # below the plot: inside, it would cover rows
        order = [verdict for verdict in STYLES if verdict in handles]
        figure.legend(
            [handles[verdict] for verdict in order],
            order,
            fontsize="small",
            loc="outside lower center",
            ncols=len(order),
        )
    return figure


def _name(model: Mapping) -> str:
    name = model["name"]
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def _rank(model: Mapping, category: str | None) -> str:
    rank = model["by_category"].get(category, {}).get("rank") if category else model["rank"]
    return "–" if rank is None else str(rank)


__all__ = ["forest_figure", "forest_plot", "svg_uri"]
