"""The HTML report's numbers are `report --format json`'s for the same trace (issue 27 §3): its
Operators tables (by name, and by name + input shape where the trace has shapes) hold the JSON's
top rows, in its order, with the same calls, self CPU, CPU total, device times and FLOPs, and each
"GPU N busy, of its span" card is the JSON's busy_us / span_us. Times are compared as printed
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
