#!/usr/bin/env python3
"""An independent reader of HdrHistogram interval logs (.hlog), and a check
of a locklab run folder against it.

Written from HdrHistogram's published formats only (the histogram log
format 1.3 that HistogramLogWriter writes, the V2 compressed histogram
encoding, HdrHistogram's bucket arithmetic and percentile iteration), not
from locklab's writer, so that a mistake in reports/hlog.c cannot hide
behind the same mistake here. Python 3 standard library only.

As a library:
    log = read_log(path)               # HistogramLog: start_time, base_time,
                                       # legend, intervals
    log.intervals[k].histogram         # Histogram
    h.total_count, h.max_value, h.value_at_percentile(99.0), h.add(other)

As a check:
    python3 tests/lib/hlog_reader.py RUN_DIR
reads RUN_DIR/<op>.hlog for every operation and compares
  - the sum of each op's intervals with <op>.hgrm (total count, max, every
    percentile line, reproduced with HdrHistogram's percentile iteration);
  - acquire.hlog second by second with report.json's timeline
    (acquire_count, acquire_p50_ms, acquire_p99_ms, acquire_max_ms).
Exit 0 when everything agrees; else every disagreement is printed as
"file: second S: figure: expected X, got Y" and the exit status is 1.

The format, as published (all integers big-endian):
  log line      [Tag=T,]start_s,length_s,max,BASE64
  compressed    int32 cookie (0x1c849304 | word size bits: 0x1c849314 for
                V2), int32 length of the deflated bytes, zlib stream
  V2 histogram  int32 cookie (0x1c849303 | 0x10), int32 payload length,
                int32 normalizing index offset, int32 significant digits,
                int64 lowest discernible value, int64 highest trackable
                value, double integer-to-double conversion ratio, then
                the counts, in counts-array index order, each a ZigZag
                LEB128 number of at most 9 bytes (the 9th carries 8 bits);
                a negative number -n stands for n zero counts.
"""

import base64
import json
import math
import os
import re
import struct
import sys
import zlib
from decimal import Decimal
from fractions import Fraction

OPS = ("acquire", "acquire_failed", "release", "hold", "step")

COMPRESSED_COOKIE_BASE = 0x1C849304
V2_COOKIE_BASE = 0x1C849303
COOKIE_BASE_MASK = ~0xF0 & 0xFFFFFFFF  # the low nibble of the second byte is the word size
V2_HEADER = struct.Struct(">iiiiqqd")  # cookie, payload length, offset, digits, lowest, highest, ratio
COMPRESSED_HEADER = struct.Struct(">ii")  # cookie, compressed length

# Log values are recorded in microseconds; the .hgrm and report.json say ms.
US_PER_MS = 1000


class FormatError(Exception):
    """The bytes or text do not follow the published format."""


# ---------------------------------------------------------------------------
# The bucket layout (HdrHistogram's index arithmetic)
# ---------------------------------------------------------------------------

class Layout:
    """Where each value goes for a given (lowest, highest, digits).

    sub_bucket_count is the power of two that holds 2 * 10^digits values at
    unit resolution; bucket 0 holds sub_bucket_count values, every later
    bucket the upper half of a range twice as wide, so the counts array is
    (bucket_count + 1) * sub_bucket_count / 2 long.
    """

    def __init__(self, lowest, highest, digits):
        if lowest < 1:
            raise FormatError(f"lowest discernible value {lowest} < 1")
        if not 0 <= digits <= 5:
            raise FormatError(f"significant digits {digits} outside 0..5")
        if highest < 2 * lowest:
            raise FormatError(f"highest trackable value {highest} < 2 * lowest {lowest}")
        self.lowest, self.highest, self.digits = lowest, highest, digits
        largest_single_unit = 2 * 10 ** digits
        # ceil(log2(largest_single_unit)), in integers
        self.sub_bucket_count_magnitude = (largest_single_unit - 1).bit_length()
        self.sub_bucket_half_count_magnitude = max(self.sub_bucket_count_magnitude, 1) - 1
        self.sub_bucket_count = 1 << self.sub_bucket_count_magnitude
        self.sub_bucket_half_count = self.sub_bucket_count // 2
        self.unit_magnitude = lowest.bit_length() - 1  # floor(log2(lowest))
        self.sub_bucket_mask = (self.sub_bucket_count - 1) << self.unit_magnitude
        # Buckets needed so that the highest trackable value is below the
        # first untrackable one.
        smallest_untrackable = self.sub_bucket_count << self.unit_magnitude
        buckets = 1
        while smallest_untrackable <= highest:
            if smallest_untrackable > (1 << 62):  # Long.MAX_VALUE / 2
                buckets += 1
                break
            smallest_untrackable <<= 1
            buckets += 1
        self.bucket_count = buckets
        self.counts_len = (self.bucket_count + 1) * self.sub_bucket_half_count

    def key(self):
        return (self.lowest, self.highest, self.digits)

    def _bucket_of(self, value):
        # HdrHistogram: leadingZeroCountBase - numberOfLeadingZeros(value |
        # subBucketMask), i.e. how far the top bit of value | mask lies above
        # the top of bucket 0 (the mask keeps small values in bucket 0).
        return ((value | self.sub_bucket_mask).bit_length()
                - self.unit_magnitude - self.sub_bucket_half_count_magnitude - 1)

    def index_of(self, value):
        """The counts-array index a value is counted at."""
        if value < 0:
            raise ValueError(f"negative value {value}")
        bucket = self._bucket_of(value)
        sub = value >> (bucket + self.unit_magnitude)
        return ((bucket + 1) << self.sub_bucket_half_count_magnitude) + (sub - self.sub_bucket_half_count)

    def value_at_index(self, index):
        """The lowest value counted at an index."""
        bucket = (index >> self.sub_bucket_half_count_magnitude) - 1
        sub = (index & (self.sub_bucket_half_count - 1)) + self.sub_bucket_half_count
        if bucket < 0:
            sub -= self.sub_bucket_half_count
            bucket = 0
        return sub << (bucket + self.unit_magnitude)

    def equivalent_range(self, value):
        """How many consecutive values share the value's bucket."""
        bucket = self._bucket_of(value)
        sub = value >> (bucket + self.unit_magnitude)
        if sub >= self.sub_bucket_count:
            bucket += 1
        return 1 << (self.unit_magnitude + bucket)

    def lowest_equivalent(self, value):
        bucket = self._bucket_of(value)
        sub = value >> (bucket + self.unit_magnitude)
        return sub << (bucket + self.unit_magnitude)

    def highest_equivalent(self, value):
        return self.lowest_equivalent(value) + self.equivalent_range(value) - 1


# ---------------------------------------------------------------------------
# A decoded histogram
# ---------------------------------------------------------------------------

class Histogram:
    def __init__(self, layout, counts=None):
        self.layout = layout
        self.counts = counts if counts is not None else [0] * layout.counts_len
        if len(self.counts) != layout.counts_len:
            raise ValueError("counts array of the wrong length")
        self.normalizing_index_offset = 0
        self.conversion_ratio = 1.0

    @property
    def total_count(self):
        return sum(self.counts)

    def max_index(self):
        """The highest non-empty index, or None."""
        for i in range(len(self.counts) - 1, -1, -1):
            if self.counts[i]:
                return i
        return None

    def min_index(self):
        for i, c in enumerate(self.counts):
            if c:
                return i
        return None

    @property
    def max_value(self):
        """HdrHistogram's getMaxValue: the highest equivalent of the top
        non-empty bucket (0 when empty)."""
        i = self.max_index()
        return 0 if i is None else self.layout.highest_equivalent(self.layout.value_at_index(i))

    def add(self, other):
        if other.layout.key() != self.layout.key():
            raise ValueError(f"cannot add a {other.layout.key()} histogram to a {self.layout.key()} one")
        for i, c in enumerate(other.counts):
            if c:
                self.counts[i] += c
        return self

    def copy(self):
        h = Histogram(self.layout, list(self.counts))
        h.normalizing_index_offset = self.normalizing_index_offset
        h.conversion_ratio = self.conversion_ratio
        return h

    @staticmethod
    def rank_at_percentile(p, total):
        """Nearest rank: max(1, ceil(p/100 * total)), evaluated exactly on the
        percentile as written (99.9 means 999/10), as HdrHistogram intends
        (it takes an ulp off p before its floating-point ceil for this)."""
        p = min(max(Fraction(repr(float(p))), Fraction(0)), Fraction(100))
        return max(1, math.ceil(p * total / 100))

    def value_at_percentile(self, p):
        """HdrHistogram's getValueAtPercentile: the highest equivalent value
        of the bucket holding the sample of rank rank_at_percentile (the
        lowest equivalent for p == 0); 0 for an empty histogram."""
        total = self.total_count
        if total == 0:
            return 0
        rank = self.rank_at_percentile(p, total)
        running = 0
        for i, c in enumerate(self.counts):
            running += c
            if running >= rank:
                v = self.layout.value_at_index(i)
                return self.layout.lowest_equivalent(v) if p == 0 else self.layout.highest_equivalent(v)
        return 0

    def percentile_ticks(self, ticks_per_half_distance=5):
        """HdrHistogram's percentile iteration (outputPercentileDistribution):
        levels spaced evenly within each half distance to 100%; a level is
        reported at the first non-empty index whose cumulative percentile
        reaches it; the index where the count runs out reports one level and
        then a closing line at 100%. Yields (index, level_percent, cumulative)."""
        total = self.total_count
        if total == 0:
            return
        level, cumulative, last = 0.0, 0, 0
        for i, c in enumerate(self.counts):
            if cumulative >= total:
                break
            if c == 0:
                continue
            cumulative += c
            last = i
            while level <= (100.0 * cumulative) / total:
                yield i, level, cumulative
                halvings = int(math.log(100.0 / (100.0 - level)) / math.log(2)) + 1
                level += 100.0 / (ticks_per_half_distance * 2.0 ** halvings)
                if cumulative == total:
                    break
        yield last, 100.0, total


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------

def zigzag_leb128_words(buf):
    """The signed numbers in buf: LEB128 of the ZigZag-mapped value, 7 bits
    per byte for the first 8 bytes and all 8 bits of a 9th."""
    pos, end = 0, len(buf)
    while pos < end:
        value, shift = 0, 0
        for nth in range(9):
            if pos >= end:
                raise FormatError("a count's LEB128 bytes run past the payload")
            b = buf[pos]
            pos += 1
            if nth == 8:
                value |= b << 56
                break
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        yield (value >> 1) ^ -(value & 1)


def decode_histogram(data):
    """A Histogram from the compressed V2 bytes (not base64)."""
    if len(data) < COMPRESSED_HEADER.size:
        raise FormatError(f"{len(data)} bytes: shorter than the compressed header")
    cookie, clen = COMPRESSED_HEADER.unpack_from(data, 0)
    cookie &= 0xFFFFFFFF
    if cookie & COOKIE_BASE_MASK != COMPRESSED_COOKIE_BASE:
        raise FormatError(f"compressed cookie 0x{cookie:08x}, not 0x1c849304 (| word size)")
    if clen < 0 or COMPRESSED_HEADER.size + clen > len(data):
        raise FormatError(f"compressed length {clen}, only {len(data) - COMPRESSED_HEADER.size} bytes follow")
    try:
        raw = zlib.decompress(data[COMPRESSED_HEADER.size:COMPRESSED_HEADER.size + clen])
    except zlib.error as e:
        raise FormatError(f"zlib: {e}") from None
    if len(raw) < V2_HEADER.size:
        raise FormatError(f"inflated to {len(raw)} bytes: shorter than the V2 header")
    cookie2, plen, offset, digits, lowest, highest, ratio = V2_HEADER.unpack_from(raw, 0)
    cookie2 &= 0xFFFFFFFF
    if cookie2 & COOKIE_BASE_MASK != V2_COOKIE_BASE:
        raise FormatError(f"V2 cookie 0x{cookie2:08x}, not 0x1c849303 (| word size)")
    if plen < 0 or V2_HEADER.size + plen > len(raw):
        raise FormatError(f"payload length {plen}, only {len(raw) - V2_HEADER.size} bytes inflated")
    layout = Layout(lowest, highest, digits)
    h = Histogram(layout)
    h.normalizing_index_offset = offset
    h.conversion_ratio = ratio
    # The payload lists counts in logical index order (the decoder sets
    # counts at their logical index; the offset only says how the writer
    # had its array rotated).
    index = 0
    for word in zigzag_leb128_words(raw[V2_HEADER.size:V2_HEADER.size + plen]):
        if word < 0:
            index += -word
            continue
        if index >= layout.counts_len:
            raise FormatError(f"a count at index {index}, past the counts array ({layout.counts_len})")
        h.counts[index] = word
        index += 1
    if index > layout.counts_len:
        raise FormatError(f"zero run to index {index}, past the counts array ({layout.counts_len})")
    return h


def decode_base64(text):
    try:
        data = base64.b64decode(text, validate=True)
    except (ValueError, base64.binascii.Error) as e:
        raise FormatError(f"base64: {e}") from None
    return decode_histogram(data)


# ---------------------------------------------------------------------------
# The interval log (format 1.3)
# ---------------------------------------------------------------------------

class Interval:
    def __init__(self, line_no, tag, start, length, max_text, histogram):
        self.line_no = line_no
        self.tag = tag
        self.start_text, self.length_text, self.max_text = start, length, max_text
        self.start = Decimal(start)
        self.length = Decimal(length)
        self.max = Decimal(max_text)  # in the log's max unit (ms here)
        self.histogram = histogram


class HistogramLog:
    def __init__(self, path):
        self.path = path
        self.start_time = None  # seconds since the epoch, Decimal
        self.base_time = None
        self.version = None
        self.legend = None
        self.comments = []
        self.intervals = []


START_RE = re.compile(r"#\[StartTime: ([0-9.]+) \(seconds since epoch\)")
BASE_RE = re.compile(r"#\[BaseTime: ([0-9.]+) \(seconds since epoch\)\]")
VERSION_RE = re.compile(r"#\[Histogram log format version ([0-9.]+)\]")
NUMBER = r"[0-9]+(?:\.[0-9]+)?"
INTERVAL_RE = re.compile(r"(?:Tag=([^,\s]+),)?(%s),(%s),(%s),([A-Za-z0-9+/=]+)$" % (NUMBER, NUMBER, NUMBER))


def read_log(path):
    """Parse a histogram log. Raises FormatError (with the line) on anything
    the format does not allow."""
    log = HistogramLog(path)
    with open(path, encoding="ascii") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                log.comments.append(line)
                m = START_RE.match(line)
                if m:
                    log.start_time = Decimal(m.group(1))
                m = BASE_RE.match(line)
                if m:
                    log.base_time = Decimal(m.group(1))
                m = VERSION_RE.match(line)
                if m:
                    log.version = m.group(1)
                continue
            if line.startswith('"StartTimestamp"'):
                log.legend = line
                continue
            if not line.strip():
                continue
            m = INTERVAL_RE.match(line)
            if not m:
                raise FormatError(f"{path}:{n}: not an interval line: {line[:80]!r}")
            try:
                h = decode_base64(m.group(5))
            except FormatError as e:
                raise FormatError(f"{path}:{n}: {e}") from None
            log.intervals.append(Interval(n, m.group(1), m.group(2), m.group(3), m.group(4), h))
    return log


# ---------------------------------------------------------------------------
# The .hgrm text (HdrHistogram's percentile distribution)
# ---------------------------------------------------------------------------

class Hgrm:
    def __init__(self):
        self.lines = []  # (value_text, percentile_text, count, line_no)
        self.max_text = None
        self.total = None
        self.buckets = None
        self.sub_buckets = None


def read_hgrm(path):
    g = Hgrm()
    with open(path, encoding="ascii") as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("Value"):
                continue
            if s.startswith("#"):
                m = re.match(r"#\[Max\s*=\s*(\S+),\s*Total count\s*=\s*(\d+)\]", s)
                if m:
                    g.max_text, g.total = m.group(1), int(m.group(2))
                m = re.match(r"#\[Buckets\s*=\s*(\d+),\s*SubBuckets\s*=\s*(\d+)\]", s)
                if m:
                    g.buckets, g.sub_buckets = int(m.group(1)), int(m.group(2))
                continue
            parts = s.split()
            if len(parts) not in (3, 4):
                raise FormatError(f"{path}:{n}: not a percentile line: {s!r}")
            g.lines.append((parts[0], parts[1], int(parts[2]), n))
    if g.total is None:
        raise FormatError(f"{path}: no '#[Max = ..., Total count = ...]' footer")
    return g


# ---------------------------------------------------------------------------
# The check of a run folder
# ---------------------------------------------------------------------------

class Problems:
    def __init__(self):
        self.items = []

    def add(self, where, second, figure, expected, got):
        sec = "" if second is None else f"second {second}: "
        self.items.append(f"{where}: {sec}{figure}: expected {expected}, got {got}")


def ms_text_to_us(text):
    """'1500.682' (ms) -> 1500682 (us), exactly; None if not whole us."""
    us = Decimal(text) * US_PER_MS
    return int(us) if us == us.to_integral_value() else None


def floor_us(ms):
    """floor(ms * 1000) of a report.json latency (a JSON number read as
    Decimal). report.json writes each latency, whole nanoseconds in ms, as
    the nearest double in 17 significant digits, so one of a whole number of
    microseconds may read a hair below it (1.2339999999999999 for 1234 us):
    floor is taken after adding 1e-6 us, far below the nanosecond the values
    carry and far above a double's error at these magnitudes."""
    return math.floor(Decimal(ms) * US_PER_MS + Decimal("0.000001"))


def check_log_shape(name, log, seconds, elapsed_s, start_wall_ns, problems):
    """Header and interval times: one interval per second of the run."""
    if log.version != "1.3":
        problems.add(name, None, "log format version", "1.3", log.version)
    if log.legend is None:
        problems.add(name, None, "legend line", '"StartTimestamp",...', "none")
    if log.start_time is None:
        problems.add(name, None, "#[StartTime: ...]", "present", "missing")
    elif start_wall_ns is not None:
        wall = Decimal(start_wall_ns) / Decimal(10 ** 9)
        if abs(log.start_time - wall) > Decimal("0.001"):
            problems.add(name, None, "StartTime (s)", f"report.json's start_wall_ns, {wall}", log.start_time)
    if log.base_time is None:
        problems.add(name, None, "#[BaseTime: ...]", "present", "missing")
    if seconds is not None and len(log.intervals) != seconds:
        problems.add(name, None, "intervals", f"{seconds} (report.json's timeline)", len(log.intervals))
    for k, iv in enumerate(log.intervals):
        if iv.start != k:
            problems.add(name, k, "interval start (s)", f"{k}.000", iv.start_text)
        last = k == len(log.intervals) - 1
        if not last and iv.length != 1:
            problems.add(name, k, "interval length (s)", "1.000", iv.length_text)
        if last and elapsed_s is not None:
            want = Decimal(repr(elapsed_s)) - k
            if not (0 < iv.length <= 1) or abs(iv.length - want) > Decimal("0.0015"):
                problems.add(name, k, "last interval length (s)",
                             f"elapsed_s - {k} = {want:.3f}", iv.length_text)
        lay = iv.histogram.layout
        if lay.key() != (1, 3600000000, 3):
            problems.add(name, k, "histogram layout (lowest, highest, digits)", (1, 3600000000, 3), lay.key())
        # Interval_Max is the max in ms: its bucket is the top non-empty one.
        top = iv.histogram.max_index()
        max_us = ms_text_to_us(iv.max_text)
        if top is None:
            if iv.max != 0:
                problems.add(name, k, "Interval_Max of an empty interval", "0.000", iv.max_text)
        elif max_us is None or lay.index_of(max_us) != top:
            problems.add(name, k, "Interval_Max's bucket (us)",
                         f"[{lay.value_at_index(top)}, {lay.highest_equivalent(lay.value_at_index(top))}]",
                         iv.max_text + " ms")


def check_against_hgrm(op, log, hgrm_path, problems):
    """The sum of the intervals against the whole-run .hgrm."""
    name = os.path.basename(hgrm_path)
    try:
        g = read_hgrm(hgrm_path)
    except (OSError, FormatError) as e:
        problems.add(name, None, "readable", "an .hgrm", e)
        return
    if not log.intervals:
        problems.add(op + ".hlog", None, "intervals", ">= 1", 0)
        return
    total = log.intervals[0].histogram.copy()
    for iv in log.intervals[1:]:
        try:
            total.add(iv.histogram)
        except ValueError as e:
            problems.add(op + ".hlog", None, "same layout in every interval", "yes", e)
            return
    lay = total.layout
    count = total.total_count
    if count != g.total:
        problems.add(name, None, "Total count (sum of the .hlog intervals)", g.total, count)
    if g.buckets is not None and (g.buckets, g.sub_buckets) != (lay.bucket_count, lay.sub_bucket_count):
        problems.add(name, None, "Buckets, SubBuckets", (g.buckets, g.sub_buckets),
                     (lay.bucket_count, lay.sub_bucket_count))
    # The max: the exact max (ms) of the .hgrm footer against the largest
    # Interval_Max, to the microsecond; and its bucket is the sum's top one.
    max_us = max((ms_text_to_us(iv.max_text) or 0) for iv in log.intervals)
    want_us = ms_text_to_us(g.max_text)
    if want_us is None:
        want_us = floor_us(g.max_text)
    if max_us != want_us:
        problems.add(name, None, "Max (ms): largest Interval_Max",
                     g.max_text, f"{Decimal(max_us) / US_PER_MS:.3f}")
    top = total.max_index()
    if count and (top is None or lay.index_of(want_us) != top):
        problems.add(name, None, "Max's bucket (index): top non-empty index of the summed intervals",
                     lay.index_of(want_us), top)
    # Every percentile line, reproduced.
    ticks = list(total.percentile_ticks(5))
    digits = lay.digits
    for j in range(max(len(ticks), len(g.lines))):
        if j >= len(ticks):
            problems.add(name, None, f"line {g.lines[j][3]}", "no such line (the sum has fewer ticks)",
                         " ".join(map(str, g.lines[j][:3])))
            continue
        i, level, cum = ticks[j]
        want = ("%.*f" % (digits, lay.highest_equivalent(lay.value_at_index(i)) / US_PER_MS),
                "%.12f" % (level / 100.0), cum)
        if j >= len(g.lines):
            problems.add(name, None, f"tick {j + 1}", " ".join(map(str, want)), "missing from the .hgrm")
            continue
        got = g.lines[j][:3]
        if tuple(got) != want:
            problems.add(name, None, f"line {g.lines[j][3]} (Value Percentile TotalCount)",
                         " ".join(map(str, got)), " ".join(map(str, want)) + " from the .hlog")


def check_timeline(log, report, problems):
    """acquire.hlog second by second against report.json's timeline."""
    t = report.get("timeline", {})
    counts = t.get("acquire_count")
    if counts is None:
        problems.add("report.json", None, "timeline.acquire_count", "an array", "missing")
        return
    p50s, p99s, maxes = (t.get("acquire_p50_ms"), t.get("acquire_p99_ms"), t.get("acquire_max_ms"))
    for k, iv in enumerate(log.intervals):
        if k >= len(counts):
            break
        h = iv.histogram
        lay = h.layout
        n = h.total_count
        if n != counts[k]:
            problems.add("acquire.hlog", k, "count (report.json acquire_count)", counts[k], n)
            continue
        if n == 0:
            for fig, arr in (("acquire_p50_ms", p50s), ("acquire_p99_ms", p99s), ("acquire_max_ms", maxes)):
                if arr is not None and arr[k] is not None:
                    problems.add("report.json", k, fig + " with no grant", "null", arr[k])
            continue
        for p, fig, arr in ((50.0, "acquire_p50_ms", p50s), (99.0, "acquire_p99_ms", p99s)):
            if arr is None or arr[k] is None:
                problems.add("report.json", k, fig, "a number", "null" if arr is not None else "missing")
                continue
            us = floor_us(arr[k])
            hv = h.value_at_percentile(p)
            if lay.lowest_equivalent(us) != lay.lowest_equivalent(hv):
                problems.add("acquire.hlog", k, f"p{p:g} bucket (us)",
                             f"{lay.lowest_equivalent(us)}..{lay.highest_equivalent(us)}"
                             f" holding floor({arr[k]} ms * 1000) = {us} (report.json {fig})",
                             f"{lay.lowest_equivalent(hv)}..{hv}")
        if maxes is None or maxes[k] is None:
            problems.add("report.json", k, "acquire_max_ms", "a number", "null")
            continue
        want_us = floor_us(maxes[k])
        got_us = ms_text_to_us(iv.max_text)
        if got_us != want_us:
            problems.add("acquire.hlog", k, "Interval_Max (ms)",
                         f"floor({maxes[k]} * 1000) / 1000 = {Decimal(want_us) / US_PER_MS:.3f}",
                         iv.max_text)


def check_run(run_dir):
    """Every disagreement in a run folder, as lines (empty: all agree)."""
    problems = Problems()
    report = None
    try:
        with open(os.path.join(run_dir, "report.json")) as f:
            report = json.load(f, parse_float=Decimal)
    except (OSError, ValueError) as e:
        problems.add("report.json", None, "readable", "a JSON report", e)
    seconds = elapsed = wall = None
    if report is not None:
        counts = report.get("timeline", {}).get("acquire_count")
        seconds = len(counts) if isinstance(counts, list) else None
        elapsed = report.get("elapsed_s")
        wall = report.get("start_wall_ns")
        for key in ("ok", "failed", "acquire_p50_ms", "acquire_p99_ms", "acquire_max_ms"):
            arr = report.get("timeline", {}).get(key)
            if seconds is not None and (not isinstance(arr, list) or len(arr) != seconds):
                problems.add("report.json", None, f"timeline.{key} length", seconds,
                             len(arr) if isinstance(arr, list) else arr)
    for op in OPS:
        path = os.path.join(run_dir, op + ".hlog")
        try:
            log = read_log(path)
        except (OSError, FormatError, UnicodeDecodeError) as e:
            problems.add(op + ".hlog", None, "readable", "a histogram log", e)
            continue
        check_log_shape(op + ".hlog", log, seconds, float(elapsed) if elapsed is not None else None,
                        wall, problems)
        check_against_hgrm(op, log, os.path.join(run_dir, op + ".hgrm"), problems)
        if op == "acquire" and report is not None:
            check_timeline(log, report, problems)
    return problems.items


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: hlog_reader.py RUN_DIR", file=sys.stderr)
        return 2
    run_dir = argv[1]
    items = check_run(run_dir)
    for line in items:
        print("DISAGREE " + line)
    if items:
        print(f"hlog_reader: {run_dir}: {len(items)} disagreement(s)")
        return 1
    print(f"hlog_reader: {run_dir}: every .hlog agrees with its .hgrm and report.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
