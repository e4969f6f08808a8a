"""The HTML report's numbers are `report --format json`'s for the same trace (issue 27 §3): its
Operators tables (by name, and by name + input shape where the trace has shapes) hold the JSON's
top rows, in its order, with the same calls, self CPU, CPU total, device times and FLOPs, and each
"GPU N busy, of its span" card is the JSON's busy_us / span_us, the Memory table's peaks are the
JSON's, and each finding's pointer into the Perfetto file names the first slice of its track in
`export --perfetto`. Times are compared as printed
(3 decimals in their unit: within half the last digit).
usage: test_html_numbers.py GPROF_TRAIN TRACE..."""
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6}


class Tables(HTMLParser):
    """The cells of every table after each <h2>/<h3> heading, and the cards."""

    def __init__(self):
        super().__init__()
        self.heading, self.tables, self.cards = "", {}, []
        self.text, self.row, self.in_cell, self.in_head = None, None, False, False

    def handle_starttag(self, tag, attrs):
        if tag in ("h2", "h3"):
            self.in_head, self.heading = True, ""
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.in_cell, self.text = True, ""
        elif tag == "div" and ("class", "card") in attrs:
            self.cards.append("")

    def handle_endtag(self, tag):
        if tag in ("h2", "h3"):
            self.in_head = False
        elif tag in ("td", "th") and self.row is not None:
            self.row.append(self.text.strip())
            self.in_cell = False
        elif tag == "tr" and self.row is not None:
            self.tables.setdefault(self.heading, []).append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.in_head:
            self.heading += data
        if self.in_cell:
            self.text += data
        if self.cards and self.row is None and not self.in_head:
            self.cards[-1] += data + "|"


def us_of(cell):
    m = re.fullmatch(r"(-?[0-9.]+)(us|ms|s)", cell)
    return float(m.group(1)) * UNITS[m.group(2)], UNITS[m.group(2)] * 5e-4


def report(gprof, trace, *extra):
    out = subprocess.run([gprof, "report", "--format", "json", "-n", "0", trace, *extra],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["traces"][0]


def check_ops(table, rows, shapes):
    errors = []
    head, body = table[0], table[1:]
    col = {h: i for i, h in enumerate(head)}
    sort = "device_total_us" if any(r["device"] for r in rows) else "cpu_total_us"
    want = [r for r in rows if not r["device"]]
    want.sort(key=lambda r: (-r[sort], r["name"], r.get("input_shapes", "")))
    if len(body) != min(20, len(want)):
        errors.append(f"{len(body)} operator rows, want {min(20, len(want))}")
    for cells, r in zip(body, want):
        key = (r["name"], r.get("input_shapes", "")) if shapes else (r["name"],)
        got_key = (cells[0], cells[1]) if shapes else (cells[0],)
        if got_key != key:
            errors.append(f"row {got_key} where report has {key}")
            continue
        if int(cells[col["Calls"]]) != r["calls"]:
            errors.append(f"{key}: calls {cells[col['Calls']]} != {r['calls']}")
        for h, f in (("Self CPU", "self_cpu_us"), ("CPU total", "cpu_total_us"),
                     ("Self device", "self_device_us"), ("Device total", "device_total_us")):
            v, tol = us_of(cells[col[h]])
            if abs(v - r[f]) > tol + 1e-9:
                errors.append(f"{key}: {h} {cells[col[h]]} != {r[f]} us")
        if "FLOPs" in col:
            want_f = str(r["flops"]) if r["flops"] else "--"
            if cells[col["FLOPs"]] != want_f:
                errors.append(f"{key}: FLOPs {cells[col['FLOPs']]} != {want_f}")
        elif r.get("flops"):
            errors.append(f"{key}: no FLOPs column, report has {r['flops']}")
    return errors


def check_memory(table, series):
    """The Memory table's peaks (MiB, 2 decimals) are the JSON's summary.memory bytes."""
    errors = []
    if not series:
        return [] if table is None else ["a memory table for a trace without memory records"]
    body = (table or [[]])[1:]
    if len(body) != len(series):
        return [f"{len(body)} memory rows, report has {len(series)} series"]
    for cells, m in zip(body, series):
        dev = ("GPU" if m["device_type"] == 1 else "CPU") + (
            f" {m['device_id']}" if m["device_id"] >= 0 else "")
        if cells[0] != dev:
            errors.append(f"memory row {cells[0]!r}, report has {dev!r}")
        peaks = [(cells[1], m["peak_allocated"])]
        if m["device_type"] == 1:  # the host has no caching allocator: no reserved bytes
            peaks.append((cells[3], m["peak_reserved"]))
        elif cells[3] != "-":
            errors.append(f"{dev}: reserved {cells[3]}, want '-'")
        for cell, want in peaks:
            if abs(float(cell.split()[0]) - want / 1048576.0) > 0.005 + 1e-9:
                errors.append(f"{dev}: peak {cell} != {want} bytes")
    return errors


def check_pointers(gprof, trace, html):
    """Each finding's pointer into the Perfetto file ("track gprof-train findings > GTxx ..., its
    first slice at T ms") is where the Perfetto export puts that track's first slice."""
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "t.json")
        subprocess.run([gprof, "export", trace, "--perfetto", out], check=True,
                       capture_output=True)
        evs = json.load(open(out))["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] == "thread_name"}
    first = {}
    for e in evs:
        if e["ph"] == "X" and e.get("cat") == "gprof_finding":
            n = names[(e["pid"], e["tid"])]
            first[n] = min(first.get(n, e["ts"]), e["ts"])
    ptr = re.findall(r"gprof-train findings &rsaquo; ([^<]+)</i>, its first slice at "
                     r"([0-9.]+) (ms|s)\.", html)
    errors = [] if len(ptr) == len(first) else [f"{len(ptr)} pointers, {len(first)} tracks"]
    for track, t, unit in ptr:
        want = first.get(track.replace("&amp;", "&"))
        got_us = float(t) * (1e3 if unit == "ms" else 1e6)
        if want is None or abs(got_us - want) > (0.5 if unit == "ms" else 500) + 1e-6:
            errors.append(f"{track}: the HTML says {t} {unit}, the Perfetto track starts at "
                          f"{want} us")
    return errors


def check(gprof, trace):
    html = subprocess.run([gprof, "export", trace, "--html", "-"], check=True,
                          capture_output=True, text=True).stdout
    p = Tables()
    p.feed(html)
    doc = report(gprof, trace)
    errors = check_ops(p.tables["Operators"], doc["rows"], False)
    if "By name and input shape" in p.tables:
        shaped = report(gprof, trace, "--group-by", "name+shape")
        errors += check_ops(p.tables["By name and input shape"], shaped["rows"], True)
    for g in doc["summary"]["gpus"]:
        want = f"{100 * g['busy_us'] / g['span_us']:.1f}%|GPU {g['device']} busy, of its span"
        if not any(c.startswith(want) for c in p.cards):
            errors.append(f"no card {want!r} in {p.cards}")
    errors += check_memory(p.tables.get("Memory"), doc["summary"].get("memory", []))
    errors += check_pointers(gprof, trace, html)
    return errors


def main():
    gprof, failed = sys.argv[1], 0
    for trace in sys.argv[2:]:
        errors = check(gprof, trace)
        print(f"{trace}: {'ok' if not errors else 'FAIL'}")
        for e in errors[:20]:
            print("   ", e)
        failed += bool(errors)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
