"""MySQL-compatible SQL functions and a frozen clock for a ``sqlite3`` connection: ``install(conn)``
is the ``Database.setup`` hook of every LogicCat database
(``"sqlbench_lmeval.logiccat.mysql_functions:install"``), so gold queries and model predictions
run with exactly the same functions (what is registered and why:
docs/logiccat.md#how-the-copy-is-made, "Functions and the clock").

>>> import sqlite3
>>> conn = sqlite3.connect(":memory:")
>>> install(conn)
>>> conn.execute(
...     "SELECT DATEDIFF('2025-12-25', CURRENT_DATE), date('now', 'localtime'),"
...     " SUBSTRING_INDEX('a,b,c', ',', 2)"
... ).fetchone()
(15, '2025-12-10', 'a,b')
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import math
import random
import re
import sqlite3
from collections.abc import Callable
from decimal import ROUND_DOWN, Decimal, InvalidOperation

from sqlbench_lmeval.execution import sqlite as sqlite_engine

FROZEN_NOW = dt.datetime(2025, 12, 10, 12, 0, 0)
"""The one instant every clock function returns (upstream commit cb580e8 is of 2025-12-10)."""

FROZEN_NOW_TEXT = FROZEN_NOW.strftime("%Y-%m-%d %H:%M:%S")

_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES = tuple(calendar.month_name)

# ---------------------------------------------------------------------------------------------
# Parsing MySQL temporal values
# ---------------------------------------------------------------------------------------------

_DATETIME_FORMATS = (
    "%Y-%m-%d %H:%M:%S.%f",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M:%S.%f",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d",
    "%Y%m%d%H%M%S",
    "%Y%m%d",
)

#: Every character of ``_DATETIME_FORMATS`` besides digits and spaces (strptime matches 'T' in
#: either case; its digits and spaces are Unicode's, as ``str.isdecimal``/``isspace``).
_DATETIME_PUNCTUATION = frozenset("-/:.Tt")

MEMO_ENTRIES = 1 << 12
"""Results remembered per memoized function (see ``_memoized``); the memos are shared by every
connection of a process, so this bounds their memory (a few MiB in all)."""


def _memoized(function: Callable) -> Callable:
    """``function`` with its results remembered, for pure functions of SQL values.

    A query calls these once per row, mostly with few distinct values (a date column), and
    parsing with ``strptime`` costs far more than a lookup. ``typed`` keeps 1, 1.0 and '1'
    apart; only functions that treat -0.0 like 0.0 (equal keys) may use this directly.
    """
    return functools.lru_cache(maxsize=MEMO_ENTRIES, typed=True)(function)


@_memoized
def parse_datetime(value: object) -> dt.datetime | None:
    """A MySQL DATE/DATETIME value (text or YYYYMMDD[hhmmss] number) as a datetime, else None."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(int(value))
    text = str(value).strip()
    if text.endswith("Z"):
        text = text[:-1]
    if not all(c.isdecimal() or c.isspace() or c in _DATETIME_PUNCTUATION for c in text):
        # No format can match (each is digits, these marks and spaces): the eleven failed
        # strptime calls cost ~0.2 ms, and a perturbed copy breaks texts up with '~'.
        return None
    for fmt in _DATETIME_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def parse_time_seconds(value: object) -> float | None:
    """A MySQL TIME value ('[-]HHH:MM[:SS[.f]]', or a datetime's time part) in seconds."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # MySQL reads the number 123456 as 12:34:56.
        sign = -1 if value < 0 else 1
        n = abs(value)
        return sign * ((n // 10000) * 3600 + (n // 100 % 100) * 60 + n % 100)
    text = str(value).strip()
    moment = parse_datetime(text)
    if moment is not None and ("-" in text[1:] or "/" in text):
        return moment.hour * 3600 + moment.minute * 60 + moment.second + moment.microsecond / 1e6
    sign = 1
    if text.startswith("-"):
        sign, text = -1, text[1:]
    parts = text.split(":")
    if not 2 <= len(parts) <= 3:
        return None
    try:
        hours, minutes = int(parts[0]), int(parts[1])
        seconds = float(parts[2]) if len(parts) == 3 else 0.0
    except ValueError:
        return None
    return sign * (hours * 3600 + minutes * 60 + seconds)


def _has_time(value: object) -> bool:
    text = str(value).strip()
    return ":" in text or (text.isdigit() and len(text) > 8)


def format_datetime(moment: dt.datetime, with_time: bool = True) -> str:
    """MySQL's text form of a DATE or DATETIME (microseconds only when present)."""
    if not with_time:
        return moment.strftime("%Y-%m-%d")
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}"
    return text


def format_time(seconds: float) -> str:
    """MySQL's text form of a TIME: [-]HH:MM:SS, hours may exceed 24."""
    sign = "-" if seconds < 0 else ""
    total = abs(seconds)
    whole = int(total)
    fraction = total - whole
    text = f"{sign}{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"
    if fraction > 1e-9:
        text += f".{round(fraction * 1e6):06d}"
    return text


def _date_part(getter: Callable[[dt.datetime], object]) -> Callable[[object], object]:
    def part(value: object) -> object:
        moment = parse_datetime(value)
        return None if moment is None else getter(moment)

    return part


def _time_part(unit_seconds: int, modulo: int | None) -> Callable[[object], int | None]:
    def part(value: object) -> int | None:
        seconds = parse_time_seconds(value)
        if seconds is None:
            return None
        whole = int(abs(seconds)) // unit_seconds
        return whole % modulo if modulo else whole

    return part


def week(value: object, mode: int = 0) -> int | None:
    """MySQL WEEK(date, mode) for the common modes (0/2: Sunday-first, 1/3: ISO-like, 5/7)."""
    moment = parse_datetime(value)
    if moment is None:
        return None
    mode = int(mode or 0)
    if mode in (3, 1):
        iso_year, iso_week, _ = moment.isocalendar()
        if mode == 3 or iso_year == moment.year:
            return iso_week
        return 0 if iso_year < moment.year else iso_week
    if mode in (5, 7):
        return int(moment.strftime("%W"))
    return int(moment.strftime("%U"))


# ---------------------------------------------------------------------------------------------
# Interval arithmetic (DATE_ADD, DATE_SUB, TIMESTAMPDIFF)
# ---------------------------------------------------------------------------------------------

_DATE_UNITS = {"DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}


def _unit_name(unit: object) -> str:
    return str(unit).strip().strip("'\"").upper().removeprefix("SQL_TSI_")


def _add_months(moment: dt.datetime, months: int) -> dt.datetime:
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def _interval_seconds(amount: object, unit: str) -> float | None:
    """Seconds of a time-based interval; compound units take MySQL's 'D H:M:S' text forms."""
    simple = {"MICROSECOND": 1e-6, "SECOND": 1, "MINUTE": 60, "HOUR": 3600}
    if unit in simple:
        return float(amount) * simple[unit]
    text = str(amount).strip()
    sign = -1 if text.startswith("-") else 1
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)]
    weights = {
        "MINUTE_SECOND": (60, 1),
        "HOUR_MINUTE": (3600, 60),
        "HOUR_SECOND": (3600, 60, 1),
        "DAY_HOUR": (86400, 3600),
        "DAY_MINUTE": (86400, 3600, 60),
        "DAY_SECOND": (86400, 3600, 60, 1),
    }.get(unit)
    if weights is None or not numbers:
        return None
    numbers = numbers[-len(weights) :]
    weights = weights[-len(numbers) :]
    return sign * sum(n * w for n, w in zip(numbers, weights, strict=False))


def date_add(value: object, amount: object, unit: object) -> str | None:
    """MySQL DATE_ADD(value, INTERVAL amount unit): a DATE stays a DATE for day-or-larger units."""
    moment = parse_datetime(value)
    if moment is None or amount is None:
        return None
    name = _unit_name(unit)
    try:
        if name in ("YEAR", "QUARTER", "MONTH", "YEAR_MONTH"):
            if name == "YEAR_MONTH":
                years, _, months = str(amount).partition("-")
                count = int(years) * 12 + int(months or 0)
            else:
                count = int(round(float(amount))) * {"YEAR": 12, "QUARTER": 3, "MONTH": 1}[name]
            moment = _add_months(moment, count)
        elif name in ("DAY", "WEEK"):
            days = round(float(amount)) * (7 if name == "WEEK" else 1)
            moment = moment + dt.timedelta(days=days)
        else:
            seconds = _interval_seconds(amount, name)
            if seconds is None:
                return None
            moment = moment + dt.timedelta(seconds=seconds)
    except (ValueError, OverflowError):
        return None
    keep_date = name in _DATE_UNITS | {"YEAR_MONTH"} and not _has_time(value)
    return format_datetime(moment, with_time=not keep_date)


def date_sub(value: object, amount: object, unit: object) -> str | None:
    """MySQL DATE_SUB(value, INTERVAL amount unit)."""
    if amount is None:
        return None
    try:
        negated: object = -float(amount)
    except (TypeError, ValueError):
        text = str(amount).strip()
        negated = text[1:] if text.startswith("-") else "-" + text
    return date_add(value, negated, unit)


def adddate(value: object, days: object) -> str | None:
    """MySQL ADDDATE(date, days)."""
    return date_add(value, days, "DAY")


def subdate(value: object, days: object) -> str | None:
    """MySQL SUBDATE(date, days)."""
    return date_sub(value, days, "DAY")


def _months_between(start: dt.datetime, end: dt.datetime) -> int:
    """Whole months from start to end, truncated toward zero as MySQL's TIMESTAMPDIFF does."""
    months = (end.year - start.year) * 12 + end.month - start.month
    rest_end = (end.day, end.time())
    rest_start = (start.day, start.time())
    if months > 0 and rest_end < rest_start:
        months -= 1
    elif months < 0 and rest_end > rest_start:
        months += 1
    return months


def timestampdiff(unit: object, start: object, end: object) -> int | None:
    """MySQL TIMESTAMPDIFF(unit, start, end): end - start in whole units."""
    first, second = parse_datetime(start), parse_datetime(end)
    if first is None or second is None:
        return None
    name = _unit_name(unit)
    if name in ("MONTH", "QUARTER", "YEAR"):
        months = _months_between(first, second)
        return int(months / {"MONTH": 1, "QUARTER": 3, "YEAR": 12}[name])
    seconds = (second - first).total_seconds()
    per = {
        "MICROSECOND": 1e-6,
        "SECOND": 1,
        "MINUTE": 60,
        "HOUR": 3600,
        "DAY": 86400,
        "WEEK": 604800,
    }.get(name)
    if per is None:
        return None
    return int(seconds / per) if name != "MICROSECOND" else int(round(seconds * 1e6))


def datediff(end: object, start: object) -> int | None:
    """MySQL DATEDIFF(end, start): days between the date parts."""
    first, second = parse_datetime(end), parse_datetime(start)
    if first is None or second is None:
        return None
    return (first.date() - second.date()).days


def timediff(end: object, start: object) -> str | None:
    """MySQL TIMEDIFF(end, start) as TIME text."""
    first, second = parse_datetime(end), parse_datetime(start)
    if first is not None and second is not None:
        return format_time((first - second).total_seconds())
    a, b = parse_time_seconds(end), parse_time_seconds(start)
    return None if a is None or b is None else format_time(a - b)


def time_to_sec(value: object) -> float | int | None:
    """MySQL TIME_TO_SEC(time)."""
    seconds = parse_time_seconds(value)
    if seconds is None:
        return None
    return int(seconds) if float(seconds).is_integer() else seconds


def sec_to_time(value: object) -> str | None:
    """MySQL SEC_TO_TIME(seconds)."""
    if value is None:
        return None
    try:
        return format_time(float(value))
    except (TypeError, ValueError):
        return None


def last_day(value: object) -> str | None:
    """MySQL LAST_DAY(date)."""
    moment = parse_datetime(value)
    if moment is None:
        return None
    end = calendar.monthrange(moment.year, moment.month)[1]
    return moment.replace(day=end).strftime("%Y-%m-%d")


def unix_timestamp(value: object) -> int | float | None:
    """MySQL UNIX_TIMESTAMP(datetime), reading times as UTC (the clock form is in
    ``clock_functions``)."""
    moment = value if isinstance(value, dt.datetime) else parse_datetime(value)
    if moment is None:
        return None
    seconds = calendar.timegm(moment.timetuple()) + moment.microsecond / 1e6
    return int(seconds) if float(seconds).is_integer() else seconds


def from_unixtime(value: object, fmt: object = None) -> str | None:
    """MySQL FROM_UNIXTIME(seconds[, format]) in UTC."""
    if value is None:
        return None
    try:
        moment = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=float(value))
    except (TypeError, ValueError, OverflowError):
        return None
    return format_datetime(moment) if fmt is None else date_format(moment, fmt)


def timestamp(value: object, time_value: object = None) -> str | None:
    """MySQL TIMESTAMP(expr[, time]) as DATETIME text."""
    moment = parse_datetime(value)
    if moment is None:
        return None
    if time_value is not None:
        seconds = parse_time_seconds(time_value)
        if seconds is None:
            return None
        moment = moment + dt.timedelta(seconds=seconds)
    return format_datetime(moment)


# MySQL DATE_FORMAT / STR_TO_DATE specifiers -> functions of a datetime.
_FORMAT_SPECIFIERS: dict[str, Callable[[dt.datetime], str]] = {
    "a": lambda m: _DAY_NAMES[m.weekday()][:3],
    "b": lambda m: _MONTH_NAMES[m.month][:3],
    "c": lambda m: str(m.month),
    "D": lambda m: f"{m.day}{_ordinal_suffix(m.day)}",
    "d": lambda m: f"{m.day:02d}",
    "e": lambda m: str(m.day),
    "f": lambda m: f"{m.microsecond:06d}",
    "H": lambda m: f"{m.hour:02d}",
    "h": lambda m: f"{(m.hour % 12) or 12:02d}",
    "I": lambda m: f"{(m.hour % 12) or 12:02d}",
    "i": lambda m: f"{m.minute:02d}",
    "j": lambda m: f"{m.timetuple().tm_yday:03d}",
    "k": lambda m: str(m.hour),
    "l": lambda m: str((m.hour % 12) or 12),
    "M": lambda m: _MONTH_NAMES[m.month],
    "m": lambda m: f"{m.month:02d}",
    "p": lambda m: "AM" if m.hour < 12 else "PM",
    "r": lambda m: m.strftime("%I:%M:%S ") + ("AM" if m.hour < 12 else "PM"),
    "S": lambda m: f"{m.second:02d}",
    "s": lambda m: f"{m.second:02d}",
    "T": lambda m: m.strftime("%H:%M:%S"),
    "U": lambda m: f"{week(m, 0):02d}",
    "u": lambda m: f"{week(m, 1):02d}",
    "V": lambda m: f"{m.isocalendar()[1]:02d}",
    "v": lambda m: f"{m.isocalendar()[1]:02d}",
    "W": lambda m: _DAY_NAMES[m.weekday()],
    "w": lambda m: str((m.weekday() + 1) % 7),
    "X": lambda m: str(m.isocalendar()[0]),
    "x": lambda m: str(m.isocalendar()[0]),
    "Y": lambda m: f"{m.year:04d}",
    "y": lambda m: f"{m.year % 100:02d}",
    "%": lambda m: "%",
}


def _ordinal_suffix(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def date_format(value: object, fmt: object) -> str | None:
    """MySQL DATE_FORMAT(date, format)."""
    moment = value if isinstance(value, dt.datetime) else parse_datetime(value)
    if moment is None or fmt is None:
        if moment is None and value is not None and fmt is not None:
            seconds = parse_time_seconds(value)
            if seconds is not None:
                moment = dt.datetime(2000, 1, 1) + dt.timedelta(seconds=seconds)
        if moment is None:
            return None
    out: list[str] = []
    text = str(fmt)
    index = 0
    while index < len(text):
        char = text[index]
        if char == "%" and index + 1 < len(text):
            spec = text[index + 1]
            render = _FORMAT_SPECIFIERS.get(spec)
            out.append(render(moment) if render else spec)
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


# MySQL STR_TO_DATE specifiers -> Python strptime directives.
_STRPTIME = {
    "Y": "%Y",
    "y": "%y",
    "m": "%m",
    "c": "%m",
    "d": "%d",
    "e": "%d",
    "H": "%H",
    "k": "%H",
    "h": "%I",
    "I": "%I",
    "l": "%I",
    "i": "%M",
    "s": "%S",
    "S": "%S",
    "f": "%f",
    "p": "%p",
    "b": "%b",
    "M": "%B",
    "a": "%a",
    "W": "%A",
    "j": "%j",
    "T": "%H:%M:%S",
    "r": "%I:%M:%S %p",
    "%": "%%",
}


def str_to_date(value: object, fmt: object) -> str | None:
    """MySQL STR_TO_DATE(text, format): DATE, DATETIME or TIME text depending on the format."""
    if value is None or fmt is None:
        return None
    pattern: list[str] = []
    text = str(fmt)
    index = 0
    has_date = has_time = False
    while index < len(text):
        char = text[index]
        if char == "%" and index + 1 < len(text):
            spec = text[index + 1]
            pattern.append(_STRPTIME.get(spec, spec))
            has_date |= spec in "YymcdebMajW"
            has_time |= spec in "HkhIlisSfpTr"
            index += 2
        else:
            pattern.append("%%" if char == "%" else char)
            index += 1
    try:
        moment = dt.datetime.strptime(str(value).strip(), "".join(pattern))
    except ValueError:
        return None
    if has_date and not has_time:
        return format_datetime(moment, with_time=False)
    if has_time and not has_date:
        return format_time(moment.hour * 3600 + moment.minute * 60 + moment.second)
    return format_datetime(moment)


# ---------------------------------------------------------------------------------------------
# Numbers and strings
# ---------------------------------------------------------------------------------------------


def truncate(value: object, places: object) -> int | float | None:
    """MySQL TRUNCATE(x, d): cut (toward zero) to d decimals; d may be negative."""
    if value is None or places is None:
        return None
    try:
        number = Decimal(str(value))
        digits = int(places)
    except (InvalidOperation, ValueError, TypeError):
        return None
    if digits >= 0:
        cut = number.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_DOWN)
    else:
        step = Decimal(1).scaleb(-digits)
        cut = (number / step).to_integral_value(rounding=ROUND_DOWN) * step
    if isinstance(value, int) and not isinstance(value, bool):
        return int(cut)
    return float(cut)


def substring_index(text: object, delimiter: object, count: object) -> str | None:
    """MySQL SUBSTRING_INDEX(str, delim, count)."""
    if text is None or delimiter is None or count is None:
        return None
    text, delimiter, count = str(text), str(delimiter), int(count)
    if not delimiter or count == 0:
        return ""
    parts = text.split(delimiter)
    if count > 0:
        return delimiter.join(parts[:count])
    return delimiter.join(parts[count:])


def left(text: object, length: object) -> str | None:
    """MySQL LEFT(str, n)."""
    if text is None or length is None:
        return None
    return str(text)[: max(int(length), 0)]


def right(text: object, length: object) -> str | None:
    """MySQL RIGHT(str, n)."""
    if text is None or length is None:
        return None
    n = int(length)
    return str(text)[-n:] if n > 0 else ""


def _pad(text: object, length: object, fill: object, at_left: bool) -> str | None:
    if text is None or length is None or fill is None:
        return None
    text, n, fill = str(text), int(length), str(fill)
    if n < 0:
        return None
    if len(text) >= n:
        return text[:n]
    if not fill:
        return None
    padding = (fill * (n // len(fill) + 1))[: n - len(text)]
    return padding + text if at_left else text + padding


def lpad(text: object, length: object, fill: object) -> str | None:
    """MySQL LPAD(str, len, padstr)."""
    return _pad(text, length, fill, True)


def rpad(text: object, length: object, fill: object) -> str | None:
    """MySQL RPAD(str, len, padstr)."""
    return _pad(text, length, fill, False)


def reverse(text: object) -> str | None:
    """MySQL REVERSE(str)."""
    return None if text is None else str(text)[::-1]


def locate(needle: object, haystack: object, start: object = 1) -> int | None:
    """MySQL LOCATE(substr, str[, pos]) (case-insensitive, as MySQL's default collation)."""
    if needle is None or haystack is None or start is None:
        return None
    begin = int(start)
    if begin < 1:
        return 0
    return str(haystack).lower().find(str(needle).lower(), begin - 1) + 1


def _text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def mysql_concat(*values: object) -> str | None:
    """MySQL CONCAT(): NULL if any argument is NULL; whole floats written without '.0'."""
    if any(v is None for v in values):
        return None
    return "".join(_text(v) for v in values)


def mysql_temporal_number(value: object) -> int | float | None:
    """A DATE/DATETIME/TIME in MySQL numeric context: YYYYMMDD, YYYYMMDDhhmmss or hhmmss."""
    if value is None or isinstance(value, (int, float)):
        return value  # type: ignore[return-value]
    moment = parse_datetime(value)
    if moment is not None:
        if _has_time(value):
            return int(moment.strftime("%Y%m%d%H%M%S"))
        return int(moment.strftime("%Y%m%d"))
    seconds = parse_time_seconds(value)
    if seconds is None:
        return 0
    sign = -1 if seconds < 0 else 1
    whole = int(abs(seconds))
    return sign * ((whole // 3600) * 10000 + (whole // 60 % 60) * 100 + whole % 60)


def concat(*values: object) -> str:
    """SQLite 3.44's concat(): NULL arguments are skipped (SQLite, not MySQL, semantics)."""
    return "".join(str(v) for v in values if v is not None)


def concat_ws(separator: object, *values: object) -> str | None:
    """SQLite 3.44's / MySQL's concat_ws(): NULL separator gives NULL, NULL values are skipped."""
    if separator is None:
        return None
    return str(separator).join(str(v) for v in values if v is not None)


def regexp(pattern: object, text: object) -> int | None:
    """``text REGEXP pattern`` (SQLite calls regexp(pattern, text)); case-insensitive as MySQL."""
    if pattern is None or text is None:
        return None
    try:
        return int(re.search(str(pattern), _text(text), re.IGNORECASE) is not None)
    except re.error:
        return None


def regexp_like(text: object, pattern: object, flags: object = None) -> int | None:
    """MySQL REGEXP_LIKE(expr, pattern[, match_type])."""
    return regexp(pattern, text)


def regexp_replace(text: object, pattern: object, replacement: object) -> str | None:
    """MySQL REGEXP_REPLACE(expr, pattern, replacement) (all occurrences)."""
    if text is None or pattern is None or replacement is None:
        return None
    try:
        return re.sub(str(pattern), str(replacement), _text(text), flags=re.IGNORECASE)
    except re.error:
        return None


def regexp_substr(text: object, pattern: object) -> str | None:
    """MySQL REGEXP_SUBSTR(expr, pattern): the first match."""
    if text is None or pattern is None:
        return None
    try:
        found = re.search(str(pattern), _text(text), re.IGNORECASE)
    except re.error:
        return None
    return found.group(0) if found else None


def mysql_format(value: object, places: object) -> str | None:
    """MySQL FORMAT(x, d): '#,###,###.##' rounded half away from zero."""
    if value is None or places is None:
        return None
    digits = max(int(places), 0)
    number = Decimal(str(value)).quantize(Decimal(1).scaleb(-digits), rounding="ROUND_HALF_UP")
    return f"{number:,.{digits}f}"


def rand(seed: object = None) -> float:
    """MySQL RAND(seed): a float in [0, 1), repeatable (``install`` answers ``RAND()`` without a
    seed from the connection's generator); RAND(NULL) is RAND(0), as in MySQL."""
    return random.Random(0 if seed is None else seed).random()


def cot(value: object) -> float | None:
    """MySQL COT(x)."""
    if value is None:
        return None
    tangent = math.tan(float(value))
    return None if tangent == 0 else 1 / tangent


# ---------------------------------------------------------------------------------------------
# Geometry: POINT columns are stored as their WKT text 'POINT(x y)'.
# ---------------------------------------------------------------------------------------------


def _point(value: object) -> tuple[float, float] | None:
    if value is None:
        return None
    inside = str(value).strip()
    if not inside.upper().startswith("POINT"):
        return None
    numbers = inside[inside.find("(") + 1 : inside.rfind(")")].split()
    try:
        return float(numbers[0]), float(numbers[1])
    except (IndexError, ValueError):
        return None


def st_geomfromtext(text: object, srid: object = None) -> str | None:
    """ST_GeomFromText(wkt): the WKT itself (our storage form of a POINT)."""
    return None if text is None else str(text)


def st_x(value: object) -> float | None:
    """ST_X(point)."""
    point = _point(value)
    return None if point is None else point[0]


def st_y(value: object) -> float | None:
    """ST_Y(point)."""
    point = _point(value)
    return None if point is None else point[1]


def st_distance_sphere(first: object, second: object, radius: object = 6370986.0) -> float | None:
    """MySQL ST_Distance_Sphere(p1, p2[, radius]): haversine with x = longitude, y = latitude."""
    a, b = _point(first), _point(second)
    if a is None or b is None or radius is None:
        return None
    lon1, lat1, lon2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * float(radius) * math.asin(math.sqrt(min(1.0, h)))


# ---------------------------------------------------------------------------------------------
# Aggregates
# ---------------------------------------------------------------------------------------------


class _Moments:
    """Running mean/variance (Welford) over the non-NULL numeric inputs."""

    sample = False
    root = False

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0

    def step(self, value: object) -> None:
        if value is None:
            return
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            number = 0.0  # MySQL reads non-numeric text as 0
        self.count += 1
        delta = number - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (number - self.mean)

    def inverse(self, value: object) -> None:
        """Remove a value (window frames sliding forward)."""
        if value is None:
            return
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            number = 0.0
        if self.count <= 1:
            self.count, self.mean, self.m2 = 0, 0.0, 0.0
            return
        old_mean = (self.mean * self.count - number) / (self.count - 1)
        self.m2 -= (number - old_mean) * (number - self.mean)
        self.mean = old_mean
        self.count -= 1

    def value(self) -> float | None:
        return self.finalize()

    def finalize(self) -> float | None:
        denominator = self.count - 1 if self.sample else self.count
        if self.count == 0 or denominator <= 0:
            return None
        variance = max(self.m2, 0.0) / denominator
        return math.sqrt(variance) if self.root else variance


class StddevPop(_Moments):
    """STDDEV / STD / STDDEV_POP: population standard deviation (MySQL)."""

    root = True


class StddevSamp(_Moments):
    """STDDEV_SAMP: sample standard deviation."""

    root = True
    sample = True


class VarPop(_Moments):
    """VARIANCE / VAR_POP: population variance (MySQL)."""


class VarSamp(_Moments):
    """VAR_SAMP: sample variance."""

    sample = True


# ---------------------------------------------------------------------------------------------
# The frozen clock: overrides of SQLite's own date functions
# ---------------------------------------------------------------------------------------------

_DROPPED_MODIFIERS = {"localtime", "utc"}


def _is_now(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower() == "now"


def _frozen_builtin(name: str, value_index: int, now: str, helper: sqlite3.Connection) -> Callable:
    """SQLite's built-in ``name`` with 'now' (or a missing time value) read as ``now``.

    Every call of the built-in name lands here, 'now' or not, and asking SQLite through the
    helper connection costs a statement per call; results are remembered, as the inputs are
    mostly a date column's few values and the answer depends on the arguments alone.
    """
    query_cache: dict[int, str] = {}

    def compute(*args: object) -> object:
        values = list(args)
        if len(values) <= value_index:
            values.append(now)
        elif _is_now(values[value_index]):
            values[value_index] = now
        kept = values[: value_index + 1] + [
            v
            for v in values[value_index + 1 :]
            if not (isinstance(v, str) and v.strip().lower() in _DROPPED_MODIFIERS)
        ]
        sql = query_cache.get(len(kept))
        if sql is None:
            sql = f"SELECT {name}({', '.join('?' * len(kept))})"
            query_cache[len(kept)] = sql
        return helper.execute(sql, kept).fetchone()[0]

    # SQLite's date functions read -0.0 as 0.0 (and write both as '0.0'), so the memo's
    # equal keys for the two are exact here too.
    return _memoized(compute)


def clock_functions(now: dt.datetime = FROZEN_NOW) -> dict[str, tuple[int, Callable]]:
    """Every function that reads the clock, reading ``now`` instead: MySQL's NOW()/CURDATE()/
    CURTIME()/UNIX_TIMESTAMP()/..., SQLite's CURRENT_* keywords and 'now' time values."""
    text = now.strftime("%Y-%m-%d %H:%M:%S")
    day = now.strftime("%Y-%m-%d")
    clock = now.strftime("%H:%M:%S")
    helper = sqlite3.connect(":memory:", check_same_thread=False)
    functions: dict[str, tuple[int, Callable]] = {
        name: (-1, _frozen_builtin(name, 0, text, helper))
        for name in ("date", "time", "datetime", "julianday", "unixepoch")
    }
    functions["strftime"] = (-1, _frozen_builtin("strftime", 1, text, helper))
    # The keywords CURRENT_DATE/CURRENT_TIME/CURRENT_TIMESTAMP are zero-argument calls.
    functions["current_date"] = (0, lambda: day)
    functions["current_time"] = (0, lambda: clock)
    functions["current_timestamp"] = (0, lambda: text)
    for name in ("now", "sysdate", "localtime", "localtimestamp", "utc_timestamp"):
        functions[name] = (-1, lambda precision=None: text)
    for name in ("curdate", "utc_date"):
        functions[name] = (0, lambda: day)
    for name in ("curtime", "utc_time"):
        functions[name] = (-1, lambda precision=None: clock)
    functions["unix_timestamp"] = (
        -1,
        lambda value=None: unix_timestamp(now if value is None else value),
    )
    return functions


# ---------------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------------

# name -> (number of arguments or -1, implementation). MySQL names, MySQL semantics.
SCALAR_FUNCTIONS: dict[str, tuple[int, Callable]] = {
    "year": (1, _date_part(lambda m: m.year)),
    "month": (1, _date_part(lambda m: m.month)),
    "day": (1, _date_part(lambda m: m.day)),
    "dayofmonth": (1, _date_part(lambda m: m.day)),
    "dayofweek": (1, _date_part(lambda m: (m.weekday() + 1) % 7 + 1)),
    "weekday": (1, _date_part(lambda m: m.weekday())),
    "dayofyear": (1, _date_part(lambda m: m.timetuple().tm_yday)),
    "quarter": (1, _date_part(lambda m: (m.month - 1) // 3 + 1)),
    "dayname": (1, _date_part(lambda m: _DAY_NAMES[m.weekday()])),
    "monthname": (1, _date_part(lambda m: _MONTH_NAMES[m.month])),
    "weekofyear": (1, _date_part(lambda m: m.isocalendar()[1])),
    "yearweek": (1, _date_part(lambda m: m.year * 100 + int(m.strftime("%U")))),
    "to_days": (1, _date_part(lambda m: m.toordinal() + 365)),
    "hour": (1, _time_part(3600, None)),
    "minute": (1, _time_part(60, 60)),
    "second": (1, _time_part(1, 60)),
    "microsecond": (1, _date_part(lambda m: m.microsecond)),
    "week": (-1, week),
    "date_add": (3, date_add),
    "date_sub": (3, date_sub),
    "adddate": (2, adddate),
    "subdate": (2, subdate),
    "datediff": (2, datediff),
    "timestampdiff": (3, timestampdiff),
    "time_to_sec": (1, time_to_sec),
    "sec_to_time": (1, sec_to_time),
    "last_day": (1, last_day),
    "from_unixtime": (-1, from_unixtime),
    "timestamp": (-1, timestamp),
    "date_format": (2, date_format),
    "str_to_date": (2, str_to_date),
    "truncate": (2, truncate),
    "substring_index": (3, substring_index),
    "left": (2, left),
    "right": (2, right),
    "lpad": (3, lpad),
    "rpad": (3, rpad),
    "reverse": (1, reverse),
    "locate": (-1, locate),
    "regexp": (2, regexp),
    "regexp_like": (-1, regexp_like),
    "regexp_replace": (3, regexp_replace),
    "regexp_substr": (2, regexp_substr),
    "mysql_format": (2, mysql_format),
    "mysql_concat": (-1, mysql_concat),
    "mysql_temporal_number": (1, mysql_temporal_number),
    "mysql_timediff": (2, timediff),
    "rand": (-1, rand),
    "cot": (1, cot),
    "st_geomfromtext": (-1, st_geomfromtext),
    "st_pointfromtext": (-1, st_geomfromtext),
    "st_x": (1, st_x),
    "st_y": (1, st_y),
    "st_distance_sphere": (-1, st_distance_sphere),
}

# Registered only when the running SQLite lacks them, with SQLite's documented semantics.
SQLITE_BACKFILLS: dict[str, tuple[int, Callable]] = {
    "concat": (-1, concat),
    "concat_ws": (-1, concat_ws),
}

AGGREGATES: dict[str, tuple[int, type]] = {
    "stddev": (1, StddevPop),
    "std": (1, StddevPop),
    "stddev_pop": (1, StddevPop),
    "stddev_samp": (1, StddevSamp),
    "variance": (1, VarPop),
    "var_pop": (1, VarPop),
    "var_samp": (1, VarSamp),
}

# Functions whose value changes between calls: never marked deterministic.
_VOLATILE = {"rand"}

# Pure temporal functions called once per row, remembered (see ``_memoized``). Each treats -0.0
# exactly like 0.0 (through int(), float() or a comparison), which the memo requires;
# STR_TO_DATE (reads str(value)) and MYSQL_TEMPORAL_NUMBER (returns numbers as given) do not.
_MEMOIZED = frozenset(
    {"year", "month", "day", "dayofmonth", "dayofweek", "weekday", "dayofyear", "quarter",
     "dayname", "monthname", "weekofyear", "yearweek", "to_days", "hour", "minute", "second",
     "microsecond", "week", "date_add", "date_sub", "adddate", "subdate", "datediff",
     "timestampdiff", "time_to_sec", "sec_to_time", "last_day", "from_unixtime", "timestamp",
     "date_format", "mysql_timediff"}
)  # fmt: skip


# What install() registers: the memoized functions wrapped once, so their memo is shared by
# every connection of the process.
_REGISTERED_SCALARS: dict[str, tuple[int, Callable]] = {
    name: (arity, _memoized(function) if name in _MEMOIZED else function)
    for name, (arity, function) in SCALAR_FUNCTIONS.items()
}


def _sqlite_has_function(conn: sqlite3.Connection, name: str, arity: int) -> bool:
    """Whether SQLite already answers ``name`` (tried with one argument, or none)."""
    args = ", ".join("NULL" for _ in range(max(arity, 1)))
    try:
        conn.execute(f"SELECT {name}({args})").fetchall()
    except sqlite3.OperationalError as error:
        return "no such function" not in str(error)
    return True


def install(conn: sqlite3.Connection, now: dt.datetime = FROZEN_NOW) -> None:
    """Register the MySQL-compatible functions and the frozen clock on ``conn``.

    ``now`` exists for measurements only (e.g. comparing with a reference run made on another
    day); benchmark connections always use ``FROZEN_NOW``.
    """
    for name, (arity, function) in _REGISTERED_SCALARS.items():
        conn.create_function(name, arity, function, deterministic=name not in _VOLATILE)
    # RAND() without a seed, the common form, straight to the C method of the connection's
    # generator, which the engine reseeds before each statement
    # (docs/engines.md#one-seed-for-every-statement): SQLite prefers the exact arity over
    # rand's -1 and calls it without a Python frame per row.
    conn.create_function("rand", 0, sqlite_engine.generator(conn).random, deterministic=False)
    for name, (arity, function) in SQLITE_BACKFILLS.items():
        if not _sqlite_has_function(conn, name, arity):
            conn.create_function(name, arity, function, deterministic=True)
    # Window-capable where Python supports it (3.11+), so STDDEV(x) OVER (...) works too.
    register = getattr(conn, "create_window_function", None) or conn.create_aggregate
    for name, (arity, aggregate) in AGGREGATES.items():
        register(name, arity, aggregate)
    for name, (arity, function) in _shared_clock_functions(now).items():
        conn.create_function(name, arity, function, deterministic=True)


@functools.lru_cache(maxsize=4)
def _shared_clock_functions(now: dt.datetime) -> dict[str, tuple[int, Callable]]:
    """``clock_functions(now)``, built once per process so that every connection shares one
    helper connection and one memo per function."""
    return clock_functions(now)
